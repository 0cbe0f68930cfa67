#include <kolibri/stepping/MomentStream.hpp>
using C19 = kolibri::RegularizedBgk<kolibri::D3Q19, float>;
template struct kolibri::MomentStep<kolibri::D3Q19, float, C19>;
