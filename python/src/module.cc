// hlogym._hlogym: the C++ half of the hlogym Python package.
#include <pybind11/pybind11.h>

#include "python/src/bindings.h"
#include "python/src/status.h"

PYBIND11_MODULE(_hlogym, m) {
  m.doc() = "hlogym's C++ core: HLO IR, passes, environments and backends.";
  m.attr("__version__") = HLOGYM_VERSION;
  hlogym::RegisterStatusExceptions(m);
  hlogym::RegisterInfo(m);
  hlogym::RegisterIr(m);
  hlogym::RegisterEval(m);
  hlogym::RegisterRewrite(m);
  hlogym::RegisterBackend(m);
  hlogym::RegisterEnvs(m);
  hlogym::RegisterAgents(m);
}
