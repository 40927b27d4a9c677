"""Skin a library of characters on a Ray cluster (or in this process): ``python -m rigml.batch``.

One task per asset: load, skin with the chosen method, write the skinned GLB (and the weights as
``.npz``), and, when the file carries its own weights, score the method against them exactly as
``rigml eval`` does. A bad asset becomes a failed row with rigml's message; it never stops the
batch. Tasks are retried when a worker or node is lost (not when an asset fails: that fails the
same way every time). Results go to ``OUT/results.parquet``, one row per asset, written
atomically every ``--checkpoint`` seconds and at the end; ``--resume`` keeps the rows that
succeeded and runs the rest.

Examples::

    python -m rigml.batch characters/ -o out/                       # a local Ray cluster
    python -m rigml.batch ../shared/data/manifest.tsv --split val --method heat -o out/
    python -m rigml.batch assets/*.fbx -o out/ --resume              # after an interruption
    python -m rigml.batch s3-mounted/lib/ -o /shared/out --address auto   # join a cluster
    python -m rigml.batch characters/ -o out/ --no-ray              # a plain local loop

A cluster of several machines: ``ray start --head --port=6379 --num-cpus=N`` on one,
``ray start --address=HEAD:6379`` on each other one (the same Python, rigml wheel and Ray version
everywhere, inputs and OUT on shared storage), then ``--address auto`` on the head. Needs the
``batch`` extra: ``pip install 'rigml[batch]'`` (ray, pyarrow).
"""

from __future__ import annotations

import argparse
import csv
import os
import sys
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Optional

import numpy as np

import rigml
from rigml import _rigml

#: File extensions taken from folders.
EXTENSIONS = (".glb", ".gltf", ".vrm", ".fbx", ".obj")

#: Metric columns (``per_asset.csv``'s names); absent metrics are null.
METRICS: tuple[str, ...] = tuple(_rigml.names()["metrics"])

#: Columns of the results table, in order (metrics after these).
COLUMNS = (
    "id",
    "path",
    "method",
    "ok",
    "error",
    "vertices",
    "triangles",
    "joints",
    "unweighted",
    "has_own_weights",
    "load_s",
    "skin_s",
    "eval_s",
    "write_s",
    "total_s",
    "output",
    "failures",
    "worker",
)


@dataclass(frozen=True)
class Asset:
    """One input: its id (the manifest's, or the file's stem) and path."""

    id: str
    path: str


@dataclass(frozen=True)
class Settings:
    """What every task does."""

    method: str
    max_influences: int
    out: str
    write: str  # "glb", "npz", "both" or "none"
    metrics: bool
    deformation: bool
    model: Optional[str] = None
    force: bool = False


def collect(inputs: Iterable[str], split: Optional[str] = None) -> list[Asset]:
    """Assets from files, folders (searched recursively) and manifests (``*.tsv``: the
    ``character`` rows, of ``split`` when given, with the manifest's ids). Ids are unique: a
    repeated stem gets its folder path prefixed."""
    assets: list[Asset] = []
    for item in inputs:
        p = Path(item)
        if p.suffix == ".tsv" and p.is_file():
            with open(p, newline="") as f:
                for row in csv.DictReader(f, delimiter="\t"):
                    if row.get("kind") == "character" and (split is None or row.get("split") == split):
                        assets.append(Asset(row["id"], str((p.parent / row["path"]).resolve())))
        elif p.is_dir():
            files = sorted(f for f in p.rglob("*") if f.suffix.lower() in EXTENSIONS and f.is_file())
            assets.extend(Asset(f.stem, str(f.resolve())) for f in files)
        else:
            # A file, or a path that does not exist: the task reports it as a failed row.
            assets.append(Asset(p.stem, str(p.resolve())))
    seen: dict[str, int] = {}
    unique = []
    for a in assets:
        if a.id in seen:
            parent = Path(a.path).parent.name
            a = Asset(f"{parent}-{a.id}-{seen[a.id]}", a.path)
        seen[a.id] = seen.get(a.id, 0) + 1
        unique.append(a)
    return unique


def process(asset: Asset, settings: Settings) -> dict:
    """Skin one asset and score it; never raises (a failure is a row with ``ok`` false)."""
    row = empty_row(asset, settings)
    row["worker"] = f"{os.uname().nodename}:{os.getpid()}"
    started = time.perf_counter()
    try:
        t = time.perf_counter()
        character = rigml.load(asset.path)
        row["load_s"] = time.perf_counter() - t
        row["vertices"] = int(len(character.vertices))
        row["triangles"] = int(len(character.triangles))
        row["joints"] = len(character.joint_names)
        if not character.joint_names:
            raise ValueError(f"{asset.path}: has no skeleton to bind to")
        t = time.perf_counter()
        result = rigml.skin_weights(
            character.vertices,
            character.triangles,
            character,
            method=settings.method,
            max_influences=settings.max_influences,
            model=settings.model,
        )
        row["skin_s"] = time.perf_counter() - t
        row["unweighted"] = int(result.unweighted)
        row["has_own_weights"] = character.weights is not None
        if settings.metrics and character.weights is not None:
            t = time.perf_counter()
            # The weights just solved, scored as rigml eval scores the method (no second solve).
            scored = rigml.evaluate(
                asset.path, [settings.method], asset_id=asset.id, deformation=settings.deformation, weights=result
            )[0]
            row["eval_s"] = time.perf_counter() - t
            for m in METRICS:
                if m in scored:
                    row[m] = float(scored[m])
            row["failures"] = ";".join(scored["failures"]) or None
        t = time.perf_counter()
        row["output"] = write_outputs(asset, character, result, settings)
        row["write_s"] = time.perf_counter() - t
        row["ok"] = True
    except Exception as e:  # noqa: BLE001 - a bad asset is a row, never a stopped batch
        row["error"] = str(e) if isinstance(e, ValueError) else f"{type(e).__name__}: {e}\n{traceback.format_exc(limit=3)}"
    row["total_s"] = time.perf_counter() - started
    return row


def write_outputs(asset: Asset, character, result, settings: Settings) -> Optional[str]:
    """The skinned GLB and/or the weights ``.npz`` under OUT; returns what was written."""
    written = []
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in asset.id)
    if settings.write in ("glb", "both"):
        path = Path(settings.out) / "glb" / f"{safe}.glb"
        path.parent.mkdir(parents=True, exist_ok=True)
        skinned = rigml.character(
            character.vertices, character.triangles, character.skeleton, (result.joints, result.weights), name=asset.id
        )
        rigml.save(skinned, path, force=True)
        written.append(str(path))
    if settings.write in ("npz", "both"):
        path = Path(settings.out) / "weights" / f"{safe}.npz"
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp.npz")
        np.savez_compressed(tmp, joints=result.joints, weights=result.weights, joint_names=np.array(character.joint_names))
        os.replace(tmp, path)
        written.append(str(path))
    return ";".join(written) or None


def write_table(rows: list[dict], path: Path) -> None:
    """``rows`` as a Parquet file, written atomically."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    types = {
        "ok": pa.bool_(),
        "has_own_weights": pa.bool_(),
        **{c: pa.int64() for c in ("vertices", "triangles", "joints", "unweighted")},
        **{c: pa.float64() for c in ("load_s", "skin_s", "eval_s", "write_s", "total_s")},
        **{m: pa.float64() for m in METRICS},
    }
    names = list(COLUMNS) + list(METRICS)
    schema = pa.schema([(n, types.get(n, pa.string())) for n in names])
    table = pa.Table.from_pylist([{n: r.get(n) for n in names} for r in rows], schema=schema)
    tmp = path.with_name(path.name + ".tmp")
    pq.write_table(table, tmp)
    os.replace(tmp, path)


def read_table(path: Path) -> list[dict]:
    import pyarrow.parquet as pq

    return pq.read_table(path).to_pylist() if path.is_file() else []


def run(
    assets: list[Asset],
    settings: Settings,
    *,
    use_ray: bool = True,
    address: Optional[str] = None,
    num_cpus: Optional[int] = None,
    retries: int = 3,
    resume: bool = False,
    checkpoint_s: float = 30.0,
    progress=None,
) -> list[dict]:
    """Process every asset (on Ray unless ``use_ray`` is false) and write
    ``OUT/results.parquet``; returns the rows. With ``resume``, rows of the existing table that
    succeeded are kept and their assets skipped. A Ray session already started by the caller is
    used as it is (and left running)."""
    out = Path(settings.out)
    out.mkdir(parents=True, exist_ok=True)
    table = out / "results.parquet"
    if table.exists() and not resume and not settings.force:
        raise FileExistsError(f"{table}: already exists (use --resume to go on, or --force to start over)")
    done = {r["id"]: r for r in read_table(table) if r.get("ok")} if resume else {}
    todo = [a for a in assets if a.id not in done]
    rows = list(done.values())
    say = progress or (lambda *_: None)
    say(f"{len(todo)} assets to do ({len(done)} done before)")
    last_write = time.monotonic()

    def record(row):
        nonlocal last_write
        rows.append(row)
        state = "ok" if row["ok"] else "FAILED: " + (row["error"] or "").splitlines()[0]
        say(f"[{len(rows)}/{len(assets)}] {row['id']}: {state}")
        if time.monotonic() - last_write > checkpoint_s:
            write_table(rows, table)
            last_write = time.monotonic()

    if not use_ray:
        for a in todo:
            record(process(a, settings))
    else:
        if not address and "ray" not in sys.modules:
            # A cluster of this process alone: nothing needs to reach it from outside, so every
            # listener stays on loopback (by default Ray listens on every interface). Ray reads
            # this when it is imported; a caller that imported Ray already sets it itself.
            os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
        import ray

        started_here = not ray.is_initialized()
        if started_here:
            kwargs = {"include_dashboard": False, "log_to_driver": False}
            if address:
                kwargs["address"] = address
            else:
                kwargs.update(num_cpus=num_cpus, _node_ip_address="127.0.0.1", object_store_memory=512 * 1024 * 1024)
            ray.init(**kwargs)
        try:
            # One CPU per task, and rigml's own thread pool sized to it, so that tasks do not
            # fight over cores.
            task = ray.remote(num_cpus=1, max_retries=retries)(process).options(
                runtime_env={"env_vars": {"RAYON_NUM_THREADS": "1"}}
            )
            pending = {task.remote(a, settings): a for a in todo}
            while pending:
                ready, _ = ray.wait(list(pending), num_returns=1)
                for ref in ready:
                    asset = pending.pop(ref)
                    try:
                        record(ray.get(ref))
                    except Exception as e:  # noqa: BLE001 - the task died more often than retried
                        row = process_failed(asset, settings, f"{type(e).__name__}: {e}")
                        record(row)
        finally:
            if started_here:
                ray.shutdown()
    order = {a.id: i for i, a in enumerate(assets)}
    rows.sort(key=lambda r: order.get(r["id"], len(order)))
    write_table(rows, table)
    return rows


def empty_row(asset: Asset, settings: Settings) -> dict:
    """A row with every column present, not done yet (``ok`` false, nothing measured)."""
    row: dict = {c: None for c in COLUMNS}
    row.update({m: None for m in METRICS})
    row.update(id=asset.id, path=asset.path, method=settings.method, ok=False)
    return row


def process_failed(asset: Asset, settings: Settings, error: str) -> dict:
    """The row of an asset whose task could not finish (lost workers beyond the retries)."""
    row = empty_row(asset, settings)
    row["error"] = error
    return row


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m rigml.batch",
        description=__doc__.split("\n\n")[0],
        epilog=__doc__.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("inputs", nargs="+", help="character files, folders, or a manifest .tsv")
    parser.add_argument("-o", "--output", required=True, help="folder for results.parquet, glb/ and weights/")
    parser.add_argument("--method", default="learned", help=f"skin method: {', '.join(rigml.METHODS)} (default learned)")
    parser.add_argument("--max-influences", type=int, default=4)
    parser.add_argument("--model", help="a model file from `rigml train` for --method learned")
    parser.add_argument("--split", help="with a manifest: only its rows of this split")
    parser.add_argument("--write", choices=["glb", "npz", "both", "none"], default="glb", help="what to write per asset")
    parser.add_argument("--no-metrics", action="store_true", help="do not score against the files' own weights")
    parser.add_argument("--no-deformation", action="store_true", help="score weights only (no deformation error)")
    parser.add_argument("--address", help="join this Ray cluster (`auto`: the local one started by `ray start`)")
    parser.add_argument("--num-cpus", type=int, help="CPUs of the local Ray cluster (default: all)")
    parser.add_argument("--retries", type=int, default=3, help="retries of a task whose worker or node was lost")
    parser.add_argument("--resume", action="store_true", help="keep the rows that succeeded, run the rest")
    parser.add_argument("--force", action="store_true", help="replace an existing results.parquet")
    parser.add_argument("--checkpoint", type=float, default=30.0, help="seconds between writes of the table")
    parser.add_argument("--no-ray", action="store_true", help="a plain loop in this process instead of Ray")
    args = parser.parse_intermixed_args(argv)
    if args.method not in rigml.METHODS and "+" not in args.method:
        parser.error(f"--method {args.method!r}: choose one of {', '.join(rigml.METHODS)}")
    if args.max_influences < 1:
        parser.error(f"--max-influences must be at least 1, got {args.max_influences}")
    if args.retries < 0:
        parser.error(f"--retries must be 0 or more, got {args.retries}")
    if not args.checkpoint > 0:
        parser.error(f"--checkpoint must be a positive number of seconds, got {args.checkpoint}")
    if args.num_cpus is not None and args.num_cpus < 1:
        parser.error(f"--num-cpus must be at least 1, got {args.num_cpus}")
    assets = collect(args.inputs, args.split)
    if not assets:
        parser.error("no input files found")
    settings = Settings(
        method=args.method,
        max_influences=args.max_influences,
        out=str(Path(args.output).resolve()),
        write=args.write,
        metrics=not args.no_metrics,
        deformation=not args.no_deformation,
        model=args.model,
        force=args.force,
    )
    started = time.perf_counter()
    try:
        rows = run(
            assets,
            settings,
            use_ray=not args.no_ray,
            address=args.address,
            num_cpus=args.num_cpus,
            retries=args.retries,
            resume=args.resume,
            checkpoint_s=args.checkpoint,
            progress=lambda line: print(line, file=sys.stderr, flush=True),
        )
    except FileExistsError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    seconds = time.perf_counter() - started
    failed = [r for r in rows if not r["ok"]]
    print(
        f"{len(rows) - len(failed)} of {len(rows)} assets done, {len(failed)} failed, in {seconds:.1f} s "
        f"({len(assets) / seconds * 60:.0f} assets/min); results: {Path(settings.out) / 'results.parquet'}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
