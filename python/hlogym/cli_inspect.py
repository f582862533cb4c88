"""`hlogym inspect FILE`: module statistics, the alternatives a dry pass
offers, and a Graphviz rendering of the (alternative) graph."""
from __future__ import annotations

import collections
from pathlib import Path

from hlogym.cli_common import CliError, format_table, us


def load_module(path: str):
    import hlogym

    if Path(path).is_dir():
        raise CliError(f"{path}: a directory, not an .hlo file")
    if not Path(path).is_file():
        raise CliError(f"file not found: {path}")
    try:
        return hlogym.HloModule.from_text(Path(path).read_text())
    except (hlogym.HloParseError, hlogym.HloVerifyError) as e:
        raise CliError(f"{path}: {e}") from None
    except UnicodeDecodeError:
        raise CliError(f"{path}: not a text file") from None


def _run(fn, *args):
    try:
        return fn(*args)
    except (ValueError, NotImplementedError, RuntimeError) as e:
        raise CliError(str(e)) from None


def write_dot(module, path: str, max_nodes: int = 2000) -> int:
    """The module's graph (every computation, node order) as Graphviz text.
    Alternatives nodes are diamonds, candidate rewrites dashed. Returns nodes written."""
    import hlogym

    instructions = module.instructions()
    n = len(instructions)
    if n > max_nodes:
        raise CliError(f"the graph has {n} nodes; --dot draws at most {max_nodes}")
    obs = hlogym.observe(module, max_nodes=max(n, 1), max_edges=max(8 * n, 16),
                         max_alternatives=max(n, 1))
    edges = obs["edge_index"]
    mask = obs["edge_mask"]
    features = obs["edge_features"]
    by_comp = collections.defaultdict(list)
    for i, (name, opcode, shape, comp) in enumerate(instructions):
        by_comp[comp].append((i, name, opcode, shape))
    lines = [f'digraph "{module.name}" {{', "  rankdir=BT;",
             '  node [shape=box, fontsize=9, fontname="Helvetica"];']
    for c, (comp, nodes) in enumerate(by_comp.items()):
        lines.append(f'  subgraph "cluster_{c}" {{ label="{comp}"; fontsize=10;')
        for i, name, opcode, shape in nodes:
            style = ""
            if opcode == "alternatives":
                style = ', shape=diamond, style=filled, fillcolor="#ffd27f"'
            elif opcode == "fusion":
                style = ', style=filled, fillcolor="#cfe8ff"'
            elif opcode == "parameter":
                style = ', shape=ellipse'
            lines.append(f'    n{i} [label="{name}\\n{opcode} {shape}"{style}];')
        lines.append("  }")
    for e in range(len(mask)):
        if not mask[e]:
            continue
        src, dst = int(edges[0, e]), int(edges[1, e])
        kind = int(features[e, 1])
        attr = {1: ' [style=dashed, color="#d08000"]', 2: ' [style=dotted, color=gray]',
                3: ' [color=red]'}.get(kind, "")
        lines.append(f"  n{src} -> n{dst}{attr};")
    lines.append("}")
    try:
        Path(path).write_text("\n".join(lines) + "\n")
    except OSError as e:
        raise CliError(f"cannot write {path}: {e}") from None
    return n


def cmd_inspect(args) -> int:
    import hlogym
    from hlogym.config import load_config

    if args.show < 0:
        raise CliError(f"--show must be at least 0, got {args.show}")
    module = load_module(args.file)
    try:
        config = load_config(args.env)
    except ValueError as e:
        raise CliError(str(e)) from None
    # Everything that can fail runs before the first line is printed, so bad
    # input gives one line on stderr and nothing on stdout.
    out = []
    opcodes = collections.Counter(op for _, op, _, _ in module.instructions())
    estimate = _run(hlogym.estimate, module, "h100")
    out.append(f"module {module.name}: {module.instruction_count} instructions in "
               f"{module.computation_count} computations; cost model (H100): "
               f"{estimate['kernels']} kernels, {us(estimate['seconds'])} us")
    top = ", ".join(f"{op} {n}" for op, n in opcodes.most_common(12))
    out.append(f"opcodes: {top}{', ...' if len(opcodes) > 12 else ''}")

    working = module.clone()
    for spec in config.pre_passes:
        _run(hlogym.run_pass, working, spec)
    after = _run(hlogym.estimate, working, "h100")
    out.append(f"after {args.env}'s pre-passes ({', '.join(config.pre_passes)}): "
               f"{working.instruction_count} instructions, {after['kernels']} kernels, "
               f"{us(after['seconds'])} us")
    dry = args.dry_pass or (config.dry_passes or config.dry_stages[0])[0]
    count = _run(hlogym.run_dry_pass, working, dry)
    alternatives = hlogym.alternatives(working)
    choices = collections.Counter(k for _, k in alternatives)
    out.append(f"dry pass {dry}: {count} alternatives nodes; choices per node: " +
               (", ".join(f"{k}: {n}" for k, n in sorted(choices.items())) or "none"))
    if alternatives and args.show:
        instructions = working.instructions()
        rows = []
        for index, k in alternatives[:args.show]:
            name, _, shape, comp = instructions[index]
            rows.append([name, str(k), shape, comp])
        out.append(format_table(["alternatives node", "choices", "shape", "computation"], rows))
    if len(alternatives) > args.show:
        out.append(f"... {len(alternatives) - args.show} more (--show N)")
    if args.dot:
        nodes = write_dot(working, args.dot)
        out.append(f"graph: {args.dot} ({nodes} nodes, alternatives as diamonds, candidates "
                   f"dashed); render with: dot -Tsvg {args.dot} -o graph.svg")
    print("\n".join(out))
    return 0


def add_inspect_parser(sub) -> None:
    p = sub.add_parser("inspect", help="module statistics, the alternatives a dry pass offers, "
                                       "a Graphviz graph")
    p.add_argument("file", help="an .hlo file")
    p.add_argument("--env", default="fusion-v0", help="whose pre-passes and dry pass to use")
    p.add_argument("--pass", dest="dry_pass", help="the dry pass (default: the env's first)")
    p.add_argument("--dot", help="write the alternative graph as Graphviz text to this file")
    p.add_argument("--show", type=int, default=20, help="alternatives nodes to list")
    p.set_defaults(run=cmd_inspect)
