"""HloEnv's imperative API on hlogym, for users porting HloEnv code.

    env = HloEnv("model.hlo")
    pipeline = Pipeline("fusion", loop_count=-1)
    pipeline.add_dry_pass("fusion")
    pipeline.add_pass("dce")
    while env.run(pipeline):
        graph = env.get_hlo_graph()
        decisions = [(node, 1) for node in graph["alt_nodes"]]
        env.apply_alternatives(decisions)
    print(env.evaluate())

Differences from HloEnv: decisions name alternatives by node index as HloEnv
does since its PR #14; get_hlo_graph() returns a dict of arrays; evaluate()
uses hlogym's runtime sources (the cost model until a backend is chosen).
"""
from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from hlogym import _hlogym

HloModule = _hlogym.HloModule
Pipeline = _hlogym.Pipeline


@dataclass(frozen=True)
class EvaluationResult:
    runtime_s: float
    kernels: int
    source: str


class HloEnv:
    def __init__(self, hlo, format: str = "auto"):
        self._module = self._load(hlo, format)

    @staticmethod
    def _load(hlo, format: str) -> HloModule:
        if isinstance(hlo, HloModule):
            return hlo.clone()
        if format not in ("auto", "path", "txt"):
            raise ValueError(f"format must be 'auto', 'path' or 'txt', got {format!r}")
        # HLO text has a computation's braces; one line without them is a
        # path, also one that is not there (not text that fails to parse).
        if format == "path" or (format == "auto" and "\n" not in hlo and
                                (os.path.exists(hlo) or "{" not in hlo)):
            return HloModule.from_file(hlo)
        return HloModule.from_text(hlo)

    def run(self, pipeline: Pipeline) -> bool:
        """Runs (or resumes) `pipeline`; True when a dry pass left alternatives to decide."""
        if not isinstance(pipeline, Pipeline):
            # HloEnv ran pass objects; here passes are named in a Pipeline.
            raise TypeError(f"run takes a hlogym.Pipeline, got {type(pipeline).__name__}: build "
                            "one with Pipeline(name), then add_pass(spec) / add_dry_pass(spec)")
        return pipeline.run(self._module)

    def get_hlo_graph(self, **limits) -> dict:
        """The current (alternative) graph as arrays; see docs/observation.md."""
        return _hlogym.observe(self._module, **limits)

    def apply_alternatives(self, decisions) -> None:
        """Applies [(node index, choice), ...] for every alternatives node, then prunes."""
        array = np.asarray(decisions)
        if array.size and not np.issubdtype(array.dtype, np.integer):
            # A cast would truncate 0.9 to 0 and take a choice nobody made.
            raise ValueError(f"decisions must be integers, got dtype {array.dtype}")
        array = array.astype(np.int64)
        if array.size == 0:
            array = array.reshape(0, 2)
        _hlogym.apply_decisions(self._module, array)

    def evaluate(self, device: str = "h100") -> EvaluationResult:
        """The module's runtime estimate from the cost model."""
        estimate = _hlogym.estimate(self._module, device)
        return EvaluationResult(estimate["seconds"], estimate["kernels"], "cost:" + estimate["device"])

    def export_hlo_to_str(self) -> str:
        return self._module.to_text()

    def clone_hlo(self) -> HloModule:
        return self._module.clone()

    def load_hlo(self, hlo, format: str = "auto") -> None:
        """Replaces the module by a copy of `hlo` (a module, a path or HLO text)."""
        self._module = self._load(hlo, format)

    def get_hlo_module(self) -> HloModule:
        return self._module

    def get_hlo_module_hash(self) -> int:
        return self._module.fingerprint()
