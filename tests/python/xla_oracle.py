"""Runs HLO text through the real XLA (CPU) with jaxlib, as an oracle.

This uses jaxlib's private names (verified with jax 0.10.x and 0.11.x), kept
in this one helper so a move in a new jax version is fixed in one place."""
import re

import numpy as np

# Attributes that newer XLA writes (the bundled data comes from JAX 0.11.2)
# and older jaxlib parsers reject, each with its meaning in older syntax:
# - compare `order=TOTAL` is a total-order comparison, which older XLA spells
#   `type=TOTALORDER` (hlogym's parser reads it the same way);
# - topk `is_stable=true` asks for ties in index order; older XLA has no such
#   attribute (on continuous random inputs ties do not occur).
_ORDER_TOTAL = re.compile(r"(compare\([^)]*\)[^\n]*?), order=TOTAL")
_TOPK_STABLE = re.compile(r"(topk\([^)]*\)[^\n]*?), is_stable=true")


def to_jaxlib_syntax(hlo_text: str) -> str:
    """The same module in the syntax the installed jaxlib parses."""
    text = _ORDER_TOTAL.sub(
        lambda m: m.group(1) if "type=" in m.group(1) else m.group(1) + ", type=TOTALORDER",
        hlo_text)
    return _TOPK_STABLE.sub(lambda m: m.group(1), text)


def run_xla(hlo_text: str, inputs: list) -> list:
    import jax
    import jaxlib
    from jax._src.lib import xla_client

    try:
        module = jaxlib._hlo.hlo_module_from_text(hlo_text)
    except Exception:  # an attribute this jaxlib predates: retry in its syntax
        module = jaxlib._hlo.hlo_module_from_text(to_jaxlib_syntax(hlo_text))
    computation = jaxlib._hlo.XlaComputation(module.as_serialized_hlo_module_proto())
    mlir = xla_client._xla.mlir.xla_computation_to_mlir_module(computation)
    cpu = jax.devices("cpu")[0]
    executable = cpu.client.compile_and_load(mlir, xla_client.DeviceList((cpu,)),
                                             xla_client.CompileOptions())
    args = [jax.device_put(x, cpu) for x in inputs]
    outputs = executable.execute(args)
    return [np.asarray(o) for o in outputs]
