# Timing-only variant (never committed): environment switches that leave stages out.
import sys
root = sys.argv[1]
p = root + '/include/kolibri/stepping/CharacteristicOutlets.hpp'
s = open(p).read()
old = "    host().layer_velocity = m_layer_velocity.data();"
assert old in s
s = s.replace(old, "    host().layer_velocity = std::getenv(\"KX_NO_LEAVE\") ? nullptr : m_layer_velocity.data();")
old = "    if (m_left)\n      step_saved(m_layer_velocity, 3, 0, exec, faces);"
assert old in s
s = s.replace(old, "    static const bool no_reduce = std::getenv(\"KX_NO_REDUCE\") != nullptr;\n    if (m_left && no_reduce) { faces.outlets = m_exchange.data(); return; }\n" + old)
s = s.replace("#include <cstdint>", "#include <cstdint>\n#include <cstdlib>", 1)
open(p, 'w').write(s)
p = root + '/include/kolibri/stepping/StreamCollide.hpp'
s = open(p).read()
old = "    R fs[L::Q], rho, u[3];\n    as_stored<L, S>(f, fs);"
assert old in s
s = s.replace(old, "    if (bc.faces.outlets->layer_velocity == nullptr) return;\n" + old)
open(p, 'w').write(s)
