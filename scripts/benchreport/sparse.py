"""The README's sparse CG section (scripts/bench-sparse.sh): deso-cg --gen
against PETSc's KSPCG on MATMPIAIJ and against the sequential twin
deso-cg-csr, time per iteration and deso's point-to-point counts; then the
sparse product's bandwidth against the read bandwidth (spmv.py), after
deso's peak memory per rank against its share (sparse_mem.py)."""
from .fmt import bind_words, count_str, provenance, ratio, table, us
from .records import median
from .sparse_mem import memory_table
from .spmv import spmv_table

CODES = (("deso", "deso (mode full)"), ("petsc", "PETSc KSPCG, MATMPIAIJ"),
         ("csr", "deso-cg-csr (sequential twin)"))


def usable(res):
    """{(problem, p, code): {round: rec}} of the runs that ran the
    iterations asked."""
    got = {}
    for r in res.recs:
        if r.tag != "run" or not r.ok or not r.iters_checked():
            continue
        key = (r.key("problem"), r.key("p"), r.key("impl"))
        got.setdefault(key, {})[r.key("round")] = r
    return got


def per_iter(rec):
    t = rec.num("time_loop")
    return t / rec.out["iters"] if t is not None and rec.out["iters"] else None


def paired(a, b):
    """The median over rounds of a's time per iteration over b's, both in
    the same round, or None."""
    rs = [per_iter(a[k]) / per_iter(b[k]) for k in a
          if k in b and per_iter(a[k]) and per_iter(b[k])]
    return median(rs)


def sparse_section(res, link):
    got = usable(res)
    s = res.settings
    rows = []
    for prob in s.get("problems", []):
        for p in s.get("nps", []):
            deso = got.get((prob, p, "deso"), {})
            for code, name in CODES:
                runs = got.get((prob, p, code))
                if not runs:
                    continue
                one = next(iter(runs.values())).out
                t = median([per_iter(r) for r in runs.values() if per_iter(r)])
                vs_petsc = paired(deso, got.get((prob, p, "petsc"), {})) if code == "deso" else None
                vs_csr = paired(deso, got.get((prob, 1, "csr"), {})) if code == "deso" and p == 1 else None
                bytes_, msgs = "—", "—"
                if code == "deso":
                    b = [r.num("bytes_p2p") / r.out["iters"] for r in runs.values()]
                    m = [r.num("msgs_p2p") / r.out["iters"] for r in runs.values()]
                    bytes_, msgs = count_str(median(b)), count_str(median(m))
                rows.append([prob, one.get("n", "?"), one.get("nnz", "?"), p, name, len(runs),
                             us(t), ratio(vs_petsc, 1) if vs_petsc else "—",
                             ratio(vs_csr, 1) if vs_csr else "—", bytes_, msgs])
    head = ["problem", "n", "nnz", "P", "code", "runs", "µs / iteration", "deso / PETSc",
            "deso / twin", "deso p2p bytes / iteration", "deso p2p messages / iteration"]
    out = [provenance(res, "scripts/bench-sparse.sh", "make bench-sparse", link,
                      quick="a smoke run: lap2d:60 and lap2d-perm:60, 20 iterations, 2 rounds"),
           "",
           f"CG on generated sparse matrices (`deso-cg --gen`), tol 0 and {s.get('iters', '?')}"
           f" iterations for every code, preconditioner {s.get('precond', '?')}: deso-cg in mode"
           " full (MPICH), PETSc's KSPCG on MATMPIAIJ (`tests/bench/cg_petsc.c --gen`, Open MPI;"
           " PETSc keeps contiguous row blocks; deso places the rows by its cost model, `--partition`"
           " auto) and the sequential twin"
           " `deso-cg-csr` at P = 1. Each code's `time_loop` over its iterations, the median"
           " over the rounds; a ratio is the median over rounds of deso's time over the other"
           " code's in the same round (below 1: deso faster). deso's point-to-point bytes and"
           " messages (halo exchanges and any vector moves, summed over the ranks) are a"
           " run's totals over its iterations, the first iteration's moves into place"
           " included: counts, not timings." + bind_words(s)
           + (" The sequential twin is started through MPICH's launcher as well, so it is"
              " bound likewise." if s.get("seq_bind") == "core" else ""), "", table(head, rows), ""]
    out += memory_table(res, got)
    out += spmv_table(res)
    return "\n".join(out)
