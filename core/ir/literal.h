// Literal: the value of a constant (or of an interpreter buffer): a shape plus
// its elements in row-major logical order, independent of the layout.
#pragma once

#include <complex>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/ir/shape.h"

namespace hlogym {

// Element storage per type: pred and sub-byte types one byte each (s4 as int8,
// u4 as uint8); f16/bf16 as uint16 bits; f8/f4 types as uint8 bits; c64 as
// std::complex<float>; c128 as std::complex<double>; the rest natively.
class Literal {
 public:
  Literal() = default;
  // Zero-filled literal of an array or tuple shape.
  explicit Literal(const Shape& shape);
  // A constant printed as `{...}`: its values were elided by the printer that
  // wrote the text. It has a shape but no data; evaluating it is an error.
  static Literal Elided(const Shape& shape);
  static Literal Tuple(std::vector<Literal> elements);
  // A scalar of `type` holding `value` (as SetFromInt64 stores it).
  static Literal ScalarFromInt64(PrimitiveType type, int64_t value);

  const Shape& shape() const { return shape_; }
  bool is_elided() const { return elided_; }
  bool is_tuple() const { return shape_.IsTuple(); }
  int64_t element_count() const { return shape_.element_count(); }

  // Raw element bytes (arrays only).
  uint8_t* raw_data() { return data_.data(); }
  const uint8_t* raw_data() const { return data_.data(); }
  size_t raw_size() const { return data_.size(); }

  template <typename T>
  absl::Span<T> data() {
    return absl::Span<T>(reinterpret_cast<T*>(data_.data()),
                         data_.size() / sizeof(T));
  }
  template <typename T>
  absl::Span<const T> data() const {
    return absl::Span<const T>(reinterpret_cast<const T*>(data_.data()),
                               data_.size() / sizeof(T));
  }

  // Element access converting through double / int64 / complex, for any
  // array element type. Index is the row-major linear index.
  double GetAsDouble(int64_t index) const;
  int64_t GetAsInt64(int64_t index) const;  // integers, pred; floats truncate
  std::complex<double> GetAsComplex(int64_t index) const;
  void SetFromDouble(int64_t index, double value);  // rounds to the type
  void SetFromInt64(int64_t index, int64_t value);  // wraps to the type's width
  void SetFromComplex(int64_t index, std::complex<double> value);

  std::vector<Literal>& tuple_elements() { return tuple_elements_; }
  const std::vector<Literal>& tuple_elements() const { return tuple_elements_; }

  // Bitwise equality of shape (ignoring layout) and data.
  bool operator==(const Literal& o) const;
  bool operator!=(const Literal& o) const { return !(*this == o); }

  // HLO text of the value without the shape, as XLA prints it:
  // "0.5", "{1, 2, 3}", "{ { 1, 2 }, { 3, 4 } }", "(1, 0)", "{...}".
  std::string ToString() const;

 private:
  Shape shape_;
  bool elided_ = false;
  std::vector<uint8_t> data_;
  std::vector<Literal> tuple_elements_;
};

// The element data of every array leaf of `literals`, tuples flattened
// depth-first in order: how compiled executables take their arguments.
std::vector<const void*> LeafData(absl::Span<const Literal> literals);

}  // namespace hlogym
