#include "core/ir/shape.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace hlogym {

bool Layout::operator==(const Layout& o) const {
  if (minor_to_major != o.minor_to_major) return false;
  if (extras == o.extras) return true;
  if (!extras || !o.extras) return false;
  return *extras == *o.extras;
}

Layout Layout::RowMajor(int64_t rank) {
  Layout layout;
  layout.minor_to_major.reserve(rank);
  for (int64_t i = rank - 1; i >= 0; --i) layout.minor_to_major.push_back(i);
  return layout;
}

std::string Layout::ToString() const {
  std::string out = "{";
  absl::StrAppend(&out, absl::StrJoin(minor_to_major, ","));
  if (extras) {
    std::string ext;
    for (const auto& tile : extras->tiles) {
      ext += "(";
      for (size_t i = 0; i < tile.size(); ++i) {
        if (i) ext += ",";
        ext += tile[i] == kCombineDimension ? "*" : absl::StrCat(tile[i]);
      }
      ext += ")";
    }
    if (!extras->tiles.empty()) ext = "T" + ext;
    if (extras->element_size_bits != 0) {
      absl::StrAppend(&ext, "E(", extras->element_size_bits, ")");
    }
    if (extras->memory_space != 0) {
      absl::StrAppend(&ext, "S(", extras->memory_space, ")");
    }
    ext += extras->other;
    if (!ext.empty()) absl::StrAppend(&out, ":", ext);
  }
  out += "}";
  return out;
}

Shape Shape::Array(PrimitiveType type, absl::Span<const int64_t> dims) {
  Shape shape;
  shape.element_type_ = type;
  shape.layout_ = Layout::RowMajor(static_cast<int64_t>(dims.size()));
  shape.has_layout_ = true;
  shape.dims_.assign(dims.begin(), dims.end());
  return shape;
}

Shape Shape::Tuple(std::vector<Shape> elements) {
  Shape shape;
  shape.element_type_ = PrimitiveType::kTuple;
  shape.tuple_shapes_ = std::make_unique<std::vector<Shape>>(std::move(elements));
  return shape;
}

Shape Shape::Token() {
  Shape shape;
  shape.element_type_ = PrimitiveType::kToken;
  return shape;
}

Shape Shape::Opaque() {
  Shape shape;
  shape.element_type_ = PrimitiveType::kOpaque;
  return shape;
}

void Shape::set_dynamic_dim(int64_t i, bool dynamic) {
  if (dynamic) {
    dynamic_mask_ |= uint64_t{1} << i;
  } else {
    dynamic_mask_ &= ~(uint64_t{1} << i);
  }
}

const std::vector<Shape>& Shape::NoShapes() {
  static const auto* const kNone = new std::vector<Shape>();
  return *kNone;
}

std::vector<Shape>& Shape::mutable_tuple_shapes() {
  if (!tuple_shapes_) tuple_shapes_ = std::make_unique<std::vector<Shape>>();
  return *tuple_shapes_;
}

bool Shape::is_static() const {
  if (IsTuple()) {
    for (const Shape& s : tuple_shapes()) {
      if (!s.is_static()) return false;
    }
    return true;
  }
  return dynamic_mask_ == 0;
}

int64_t Shape::element_count() const {
  int64_t n = 1;
  for (int64_t d : dims_) n *= d;
  return n;
}

int64_t Shape::byte_size() const {
  if (IsTuple()) {
    int64_t total = 0;
    for (const Shape& s : tuple_shapes()) total += s.byte_size();
    return total;
  }
  if (!IsArray()) return 0;
  return element_count() * ByteWidth(element_type_);
}

void Shape::FillMissingLayout() {
  if (IsTuple()) {
    if (tuple_shapes_) {
      for (Shape& s : *tuple_shapes_) s.FillMissingLayout();
    }
    return;
  }
  if (IsArray() && !has_layout_) {
    layout_ = Layout::RowMajor(rank());
    has_layout_ = true;
  }
}

bool Shape::operator==(const Shape& o) const {
  if (!Compatible(o)) return false;
  if (IsTuple()) {
    for (int64_t i = 0; i < tuple_size(); ++i) {
      if (tuple_shape(i) != o.tuple_shape(i)) return false;
    }
    return true;
  }
  if (has_layout_ && o.has_layout_ && rank() > 0) return layout_ == o.layout_;
  return true;
}

bool Shape::Compatible(const Shape& o) const {
  if (element_type_ != o.element_type_) return false;
  if (IsTuple()) {
    if (tuple_size() != o.tuple_size()) return false;
    for (int64_t i = 0; i < tuple_size(); ++i) {
      if (!tuple_shape(i).Compatible(o.tuple_shape(i))) return false;
    }
    return true;
  }
  return SameDimensions(o);
}

bool Shape::SameDimensions(const Shape& o) const {
  return dims_ == o.dims_ && dynamic_mask_ == o.dynamic_mask_;
}

std::string Shape::ToString(bool print_layout) const {
  if (IsTuple()) {
    std::string out = "(";
    for (int64_t i = 0; i < tuple_size(); ++i) {
      if (i) out += ", ";
      out += tuple_shape(i).ToString(print_layout);
    }
    out += ")";
    return out;
  }
  std::string out(PrimitiveTypeName(element_type_));
  if (IsToken() || IsOpaque()) return out + "[]";
  out += "[";
  for (size_t i = 0; i < dims_.size(); ++i) {
    if (i) out += ",";
    if (dims_[i] == kUnboundedSize) {
      out += "?";
    } else {
      if (is_dynamic_dim(static_cast<int64_t>(i))) out += "<=";
      absl::StrAppend(&out, dims_[i]);
    }
  }
  out += "]";
  if (print_layout && has_layout_ && !dims_.empty()) out += layout_.ToString();
  return out;
}

}  // namespace hlogym
