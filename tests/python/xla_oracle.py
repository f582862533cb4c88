"""Runs HLO text through the real XLA (CPU) with jaxlib, as an oracle.

This uses jaxlib's private names (verified with jax 0.11.x), kept in this one
helper so a move in a new jax version is fixed in one place."""
import numpy as np


def run_xla(hlo_text: str, inputs: list) -> list:
    import jax
    import jaxlib
    from jax._src.lib import xla_client

    module = jaxlib._hlo.hlo_module_from_text(hlo_text)
    computation = jaxlib._hlo.XlaComputation(module.as_serialized_hlo_module_proto())
    mlir = xla_client._xla.mlir.xla_computation_to_mlir_module(computation)
    cpu = jax.devices("cpu")[0]
    executable = cpu.client.compile_and_load(mlir, xla_client.DeviceList((cpu,)),
                                             xla_client.CompileOptions())
    args = [jax.device_put(x, cpu) for x in inputs]
    outputs = executable.execute(args)
    return [np.asarray(o) for o in outputs]
