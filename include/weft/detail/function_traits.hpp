// Compile-time facts about remote functions and methods: their class, result and parameters.
#pragma once

#include <tuple>
#include <type_traits>

namespace weft::detail {

template <class F>
struct FunctionTraits;

template <class R, class... A>
struct FunctionTraits<R (*)(A...)> {
  using Class = void;
  using Result = R;
  using Args = std::tuple<std::decay_t<A>...>;
  static constexpr size_t arity = sizeof...(A);
};
template <class R, class... A>
struct FunctionTraits<R (*)(A...) noexcept> : FunctionTraits<R (*)(A...)> {};

#define WEFT_DETAIL_METHOD_TRAITS(QUALS)             \
  template <class R, class C, class... A>            \
  struct FunctionTraits<R (C::*)(A...) QUALS> {      \
    using Class = C;                                 \
    using Result = R;                                \
    using Args = std::tuple<std::decay_t<A>...>;     \
    static constexpr size_t arity = sizeof...(A);    \
  };
WEFT_DETAIL_METHOD_TRAITS()
WEFT_DETAIL_METHOD_TRAITS(const)
WEFT_DETAIL_METHOD_TRAITS(noexcept)
WEFT_DETAIL_METHOD_TRAITS(const noexcept)
WEFT_DETAIL_METHOD_TRAITS(&)
WEFT_DETAIL_METHOD_TRAITS(const&)
#undef WEFT_DETAIL_METHOD_TRAITS

}  // namespace weft::detail
