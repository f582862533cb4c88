// Shape: an array (element type, dimensions, layout) or a tuple of shapes.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/types/span.h"
#include "core/ir/primitive_type.h"

namespace hlogym {

// Dimension sizes and layout orders live inline up to rank 4 (all but 10 of
// the ~24,000 array shapes in the corpus and dataset): a step of the rewrite
// env copies shapes by the thousand (candidate fused computations), and heap
// vectors made them the bulk of its allocations. Not more: a shape is part
// of every instruction, and an env step is bound by the cache misses of the
// ~22,000 instructions it makes and frees (rank 6 was 32 bytes more of each).
using DimVector = absl::InlinedVector<int64_t, 4>;

// Size of an unbounded dynamic dimension, written `?` in HLO text.
inline constexpr int64_t kUnboundedSize = std::numeric_limits<int64_t>::min();
// Tile dimension written `*` in HLO text (XLA's combine dimension).
inline constexpr int64_t kCombineDimension = std::numeric_limits<int64_t>::min();

// Rarely used layout parts (TPU tiling, memory space, sub-byte element size).
// Kept out of line so that the common layout stays small.
struct LayoutExtras {
  std::vector<std::vector<int64_t>> tiles;  // T(8,128)(2,1)
  int64_t element_size_bits = 0;            // E(4)
  int64_t memory_space = 0;                 // S(1)
  // Any further layout parts (D(..), L(..), #(..), *(..), SC.., P(..), M(..)),
  // verbatim as they appeared after ':' in the text, in text order.
  std::string other;

  bool operator==(const LayoutExtras& o) const {
    return tiles == o.tiles && element_size_bits == o.element_size_bits &&
           memory_space == o.memory_space && other == o.other;
  }
};

struct Layout {
  DimVector minor_to_major;
  std::shared_ptr<const LayoutExtras> extras;  // null when there are none

  bool operator==(const Layout& o) const;
  bool operator!=(const Layout& o) const { return !(*this == o); }
  // The default (row-major) layout for a rank: {rank-1, ..., 1, 0}.
  static Layout RowMajor(int64_t rank);
  // Text as in HLO: "{1,0}" or "{1,0:T(8,128)}".
  std::string ToString() const;
};

class Shape {
 public:
  Shape() = default;  // An invalid empty tuple-less shape; use the factories.
  Shape(const Shape& o);
  Shape& operator=(const Shape& o);
  Shape(Shape&&) noexcept = default;
  Shape& operator=(Shape&&) noexcept = default;
  ~Shape() = default;

  static Shape Array(PrimitiveType type, absl::Span<const int64_t> dims);  // row-major
  static Shape Scalar(PrimitiveType type) { return Array(type, {}); }
  static Shape Tuple(std::vector<Shape> elements);
  static Shape Token();
  static Shape Opaque();

  PrimitiveType element_type() const { return element_type_; }
  void set_element_type(PrimitiveType type) { element_type_ = type; }

  bool IsTuple() const { return element_type_ == PrimitiveType::kTuple; }
  bool IsToken() const { return element_type_ == PrimitiveType::kToken; }
  bool IsOpaque() const { return element_type_ == PrimitiveType::kOpaque; }
  bool IsArray() const { return IsArrayType(element_type_); }
  bool IsScalar() const { return IsArray() && dims_.empty(); }

  // Array dimensions. A dynamic dimension holds its bound (or kUnboundedSize).
  int64_t rank() const { return static_cast<int64_t>(dims_.size()); }
  absl::Span<const int64_t> dims() const { return dims_; }
  int64_t dim(int64_t i) const { return dims_[i]; }
  DimVector& mutable_dims() { return dims_; }
  bool is_dynamic_dim(int64_t i) const { return (dynamic_mask_ >> i) & 1; }
  void set_dynamic_dim(int64_t i, bool dynamic);
  bool is_static() const;  // no dynamic dims anywhere (tuples recurse)
  // Number of elements of an array shape (1 for a scalar).
  int64_t element_count() const;
  // Bytes of an array (element_count * ByteWidth); tuples sum their elements.
  int64_t byte_size() const;

  bool has_layout() const { return has_layout_; }
  const Layout& layout() const { return layout_; }
  Layout& mutable_layout() { has_layout_ = true; return layout_; }
  void set_layout(Layout layout) { layout_ = std::move(layout); has_layout_ = true; }
  void clear_layout() { layout_ = Layout(); has_layout_ = false; }
  // Gives every array without a layout (recursively) the row-major layout.
  void FillMissingLayout();

  const std::vector<Shape>& tuple_shapes() const {
    return tuple_shapes_ ? *tuple_shapes_ : NoShapes();
  }
  std::vector<Shape>& mutable_tuple_shapes();
  const Shape& tuple_shape(int64_t i) const { return (*tuple_shapes_)[i]; }
  int64_t tuple_size() const {
    return tuple_shapes_ ? static_cast<int64_t>(tuple_shapes_->size()) : 0;
  }

  // Same type, dims, dynamism, and layouts where both sides have one.
  bool operator==(const Shape& o) const;
  bool operator!=(const Shape& o) const { return !(*this == o); }
  // Same type, dims and dynamism; layouts ignored.
  bool Compatible(const Shape& o) const;
  // Same dims and dynamism; element types and layouts ignored.
  bool SameDimensions(const Shape& o) const;

  // HLO text: "f32[8,4]{1,0}", "(s32[], f32[2]{0})", "f32[<=4,?]".
  std::string ToString(bool print_layout = true) const;

 private:
  PrimitiveType element_type_ = PrimitiveType::kTuple;
  bool has_layout_ = false;
  uint64_t dynamic_mask_ = 0;  // bit i set: dimension i is dynamic
  DimVector dims_;
  Layout layout_;
  // Out of line (null for an array): a pointer is 16 bytes less than an
  // empty vector in every instruction's shape.
  std::unique_ptr<std::vector<Shape>> tuple_shapes_;

  static const std::vector<Shape>& NoShapes();
};

inline Shape::Shape(const Shape& o)
    : element_type_(o.element_type_),
      has_layout_(o.has_layout_),
      dynamic_mask_(o.dynamic_mask_),
      dims_(o.dims_),
      layout_(o.layout_),
      tuple_shapes_(o.tuple_shapes_ ? std::make_unique<std::vector<Shape>>(*o.tuple_shapes_)
                                    : nullptr) {}

inline Shape& Shape::operator=(const Shape& o) {
  if (this != &o) *this = Shape(o);
  return *this;
}

}  // namespace hlogym
