#!/usr/bin/env python3
"""Concurrency stress of a writable legacyfs mount (python3 stdlib only).

    stress.py run --mnt MNT --src SRC --convert CONVERT --state STATE.json
                  [--seed N] [--seconds S] [--readers N] MODEL...
        MODEL: file names in SRC (mounted at MNT). Writers and readers run
        for S seconds (default 30), then the outcome is written to STATE.
    stress.py check --src SRC --convert CONVERT --state STATE.json
        After unmounting: every model in SRC decodes and holds the last
        acknowledged edit of every writer (nothing lost).

The plan (seeded): the first MODEL is the *shared* model: four writers, one
per kind, each on its own view (one of them on the whole-model text view,
which every other save changes: its saves may be refused as stale and are
then retried, as a user would). The second MODEL also gets a *shared view*:
two renaming writers on different lines of one view. Every other MODEL gets
one writer of a seeded kind (*separate* models). Writer kinds:

    sed       sed -i 'Nc\\LINE' VIEW      (temp file + rename onto the view)
    replace   mkstemp in the view's folder, write, fsync, close, os.replace
    redirect  what the shell's `>` does: open(O_WRONLY|O_CREAT|O_TRUNC),
              write, close (commit at close)
    truncate  truncate(VIEW, 0), open(O_WRONLY), write, fsync, close

Each writer owns one line of one view (an OBJ vertex x, a CSV key's x, a
node's position x) and writes the values 0.25, 1.25, 2.25, ... there; a
value is *acknowledged* when sed exits 0 / os.replace and close return 0.
A refused save (EINVAL: stale base or conflict) is re-read and retried.

Readers loop over `grep -r` of the mount and a find+cat walk (os.walk and
read every file). With --mover DIR, a thread renames SOURCE folder DIR (a
model nobody writes inside) to DIR.moved and back through the mount
meanwhile (names below it come and go: ENOENT there is not an error). Every writer runs in a process of its own (the mount keeps
one read record per process and view). Without --strict, read-backs of
writers that share a view, or a model with a writer of the whole-model
text, that show another writer's text are only counted (the mode before
per-process bases); --strict (concurrency.sh's default) fails on them. Errors counted as failures: ESTALE, EIO, ENOENT/ENOTDIR of
a view (scratch names come and go), an empty read of a view that no
truncating writer targets, sed's "not a regular file", any writer error
other than EINVAL. `check` then decodes SOURCE with legacyfs-convert and
compares each writer's line with its last acknowledged value (a later,
unacknowledged attempt is also accepted: its outcome is unknown).

Exit status: 0 all good, 1 failures (listed on stderr), 2 usage.
"""

import argparse
import errno
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import threading
import time

KINDS = ("sed", "replace", "redirect", "truncate")
BAD_ERRNOS = {errno.ESTALE: "ESTALE", errno.EIO: "EIO", errno.ENOENT: "ENOENT",
              errno.ENOTDIR: "ENOTDIR", errno.EISDIR: "EISDIR", errno.EBADF: "EBADF"}


def ename(e):
    return errno.errorcode.get(e, str(e))


def convert(conv, *args):
    return subprocess.run([conv, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          check=False)


def slots_of(text):
    """Editable (line index, field index) of a view text: OBJ vertices,
    CSV rows, position lines of the model text."""
    out = []
    for i, line in enumerate(text.split("\n")):
        t = line.split()
        if line.startswith("v ") and len(t) >= 4:
            out.append((i, 1, "space"))
        elif re.match(r"^\s*position\s+\S+\s+\S+\s+\S+\s*$", line):
            out.append((i, 1, "space"))
        elif re.match(r"^[0-9.eE+-]+(,[0-9.eE+-]+){2,}$", line) and i > 0:
            out.append((i, 1, "comma"))
    return out


def set_field(line, field, sep, value):
    if sep == "comma":
        parts = line.split(",")
        parts[field] = value
        return ",".join(parts)
    parts = re.split(r"(\s+)", line)
    k = 0
    for j, p in enumerate(parts):
        if p and not p.isspace():
            if k == field:
                parts[j] = value
                break
            k += 1
    return "".join(parts)


def get_field(line, field, sep):
    if sep == "comma":
        return line.split(",")[field]
    return line.split()[field]


def plan(args):
    rng = random.Random(args.seed)
    models = []
    for m in args.models:
        r = convert(args.convert, "list", "--root", args.src, os.path.join(args.src, m))
        if r.returncode != 0:
            sys.exit("stress: %s does not list: %s" % (m, r.stderr.decode(errors="replace")))
        views = [ln.split("\t", 1)[1] for ln in r.stdout.decode().splitlines() if "\t" in ln]
        cands = {}
        for v in views:
            if not (v.endswith(".obj") or v.endswith(".csv") or v in ("model.mdl", "model.txt", "anim.txt")):
                continue
            if v == "model.obj" or "orientation" in v:
                continue  # model.obj: read-only for NWN; orientation keys: axis-angle, x alone does not survive  # read-only for NWN; every format's model.obj covers all meshes anyway
            path = os.path.join(args.mnt, m, v)
            st = os.stat(path)
            if not st.st_mode & 0o200:
                continue
            with open(path, "r", encoding="utf-8", errors="surrogateescape") as f:
                s = slots_of(f.read())
            if s:
                cands[v] = s
        models.append((m, views, cands))
    writers = []

    def add(kind, m, v, cands):
        line, field, sep = cands[v][rng.randrange(len(cands[v]))]
        writers.append({"id": len(writers), "kind": kind, "model": m, "view": v, "line": line,
                        "field": field, "sep": sep})
        # each writer its own line
        cands[v] = [c for c in cands[v] if c[0] != line]

    for idx, (m, _views, cands) in enumerate(models):
        vs = sorted(v for v in cands if cands[v])
        if not vs:
            continue
        if idx == 0:
            # shared model: one writer per kind on its own view; the text of
            # the whole model (if any) to a renaming writer
            kinds = list(KINDS)
            rng.shuffle(kinds)
            whole = [v for v in vs if v in ("model.mdl", "model.txt")]
            parts = [v for v in vs if v not in whole]
            rng.shuffle(parts)
            order = whole + parts
            for k in sorted(kinds, key=lambda k: k not in ("sed", "replace")):
                if not order:
                    break
                add(k, m, order.pop(0), cands)
        elif idx == 1:
            # shared view: two renaming writers on two lines of one view
            v = max(vs, key=lambda v: len(cands[v]))
            add("sed", m, v, cands)
            if cands[v]:
                add("replace", m, v, cands)
        else:
            add(KINDS[rng.randrange(len(KINDS))], m, rng.choice(vs), cands)
    # Writers whose saves another writer's stale text can overwrite: those
    # sharing a view, and every writer of a model that also has a writer of
    # the whole-model text. Until each process's save is checked against the
    # text *it* read (not the last text served to anyone), a reader between
    # two saves can make such a loss pass the stale check; --strict counts
    # those as failures too.
    for w in writers:
        w["exposed"] = any(o is not w and o["model"] == w["model"] and
                           (o["view"] == w["view"] or o["view"] in ("model.mdl", "model.txt"))
                           for o in writers)
    return models, writers


class Stats:
    def __init__(self):
        self.mu = threading.Lock()
        self.bad = []        # (who, what)
        self.count = {}

    def inc(self, k, n=1):
        with self.mu:
            self.count[k] = self.count.get(k, 0) + n

    def fail(self, who, what):
        with self.mu:
            self.count["bad"] = self.count.get("bad", 0) + 1
            if len(self.bad) < 200:
                self.bad.append("%s: %s" % (who, what))


def read_text(path):
    with open(path, "rb") as f:
        return f.read().decode("utf-8", errors="surrogateescape")


def writer_main(args, w, stop, stats, seed):
    rng = random.Random(seed)
    path = os.path.join(args.mnt, w["model"], w["view"])
    folder = os.path.dirname(path)
    who = "writer %d (%s %s/%s:%d)" % (w["id"], w["kind"], w["model"], w["view"], w["line"] + 1)
    w["acked"] = None
    w["attempts"] = []   # values tried after the last acknowledged one
    w["saves"] = w["refused"] = 0
    i = 0
    while not stop.is_set():
        value = "%d.25" % i
        i += 1
        w["attempts"].append(value)
        landed = False
        for _try in range(50):
            if stop.is_set():
                break
            err = None
            try:
                text = read_text(path)
                lines = text.split("\n")
                if w["line"] >= len(lines):
                    err = "view has %d lines" % len(lines)
                    raise RuntimeError(err)
                lines[w["line"]] = set_field(lines[w["line"]], w["field"], w["sep"], value)
                new = "\n".join(lines)
                data = new.encode("utf-8", errors="surrogateescape")
                k = w["kind"]
                if k == "sed":
                    esc = lines[w["line"]].replace("\\", "\\\\")
                    r = subprocess.run(["sed", "-i", "%dc\\\n%s" % (w["line"] + 1, esc), path],
                                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
                    if r.returncode != 0:
                        msg = r.stderr.decode(errors="replace").strip()
                        if "Invalid argument" in msg:
                            raise OSError(errno.EINVAL, msg)
                        raise RuntimeError("sed: " + msg)
                elif k == "replace":
                    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".stress")
                    try:
                        os.write(fd, data)
                        os.fsync(fd)
                    finally:
                        os.close(fd)
                    try:
                        os.replace(tmp, path)
                    except OSError:
                        try:
                            os.unlink(tmp)
                        except OSError:
                            pass
                        raise
                elif k == "redirect":
                    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
                    try:
                        os.write(fd, data)
                    finally:
                        os.close(fd)
                else:
                    os.truncate(path, 0)
                    fd = os.open(path, os.O_WRONLY)
                    try:
                        os.write(fd, data)
                        os.fsync(fd)
                    finally:
                        os.close(fd)
                landed = True
            except OSError as e:
                if e.errno == errno.EINVAL:
                    w["refused"] += 1
                    stats.inc("refused")
                    false_refusal(args, w, who, stats)
                    time.sleep(rng.random() * 0.02)
                    continue
                err = "%s: %s" % (ename(e.errno) if e.errno else "?", e)
            except RuntimeError as e:
                err = str(e)
            if err:
                stats.fail(who, err)
                time.sleep(0.05)
                continue
            break
        if landed:
            w["acked"] = value
            w["attempts"] = []
            w["saves"] += 1
            stats.inc("saves")
            # the writer reads its own save back (the view's new text)
            try:
                got = get_field(read_text(path).split("\n")[w["line"]], w["field"], w["sep"])
                if got != value:
                    stats.inc("readback_mismatch")
                    if w["exposed"] and not args.strict:
                        stats.inc("known_lost_update")
                    else:
                        stats.fail(who, "read back %s after saving %s" % (got, value))
            except (OSError, IndexError) as e:
                stats.fail(who, "read back: %s" % e)
        time.sleep(rng.random() * 0.01)


CONFLICT_RE = re.compile(r"^(?P<view>[^:]+):(?P<at>\d+):1: error: conflicts with a change saved since "
                         r"you read this file \((?:lines (?P<a>\d+)-(?P<b>\d+)|line (?P<l>\d+)|"
                         r"the lines you deleted before line (?P<d>\d+));")


def false_refusal(args, w, who, stats):
    """After a refusal (EINVAL) of writer @p w's save: was it a conflict
    none of whose places is the line this writer changed (its only change:
    a *false* conflict, a save refused for another writer's change)? Reads
    errors.txt of the model folder (the last message of the view)."""
    try:
        with open(os.path.join(args.mnt, w["model"], "errors.txt"), "rb") as f:
            msg = f.read().decode("utf-8", errors="replace")
    except OSError:
        return
    mine = w["line"] + 1
    places = []
    for line in msg.splitlines():
        m = CONFLICT_RE.match(line)
        if not m or m.group("view") != w["view"]:
            continue
        if m.group("a"):
            places.append((int(m.group("a")), int(m.group("b"))))
        elif m.group("l"):
            places.append((int(m.group("l")), int(m.group("l"))))
        else:
            d = int(m.group("d"))
            places.append((d - 1, d))
    if not places:
        stats.inc("refused_not_conflict")
        return
    stats.inc("refused_conflict")
    if not any(a <= mine <= b for a, b in places):
        stats.inc("false_refusal")
        if args.strict:
            stats.fail(who, "false conflict: refused for line(s) %s, this writer changed only line %d" % (
                ", ".join("%d-%d" % p if p[0] != p[1] else str(p[0]) for p in places), mine))


def mover_main(args, stop, stats):
    """Rename folder --mover (a SOURCE folder holding a model nobody writes)
    back and forth through the mount while the readers walk it."""
    a = os.path.join(args.mnt, args.mover)
    b = a + ".moved"
    while not stop.is_set():
        for x, y in ((a, b), (b, a)):
            try:
                os.rename(x, y)
                stats.inc("moves")
            except OSError as e:
                stats.fail("mover", "rename %s: %s" % (os.path.basename(x), ename(e.errno)))
            time.sleep(0.02)


def moving(args, path):
    """Is @p path below the folder the mover renames (names come and go)?"""
    if not args.mover:
        return False
    rel = os.path.relpath(path, args.mnt).split(os.sep)[0]
    return rel in (args.mover, args.mover + ".moved")


def classify_path(args, path, views):
    rel = os.path.relpath(path, args.mnt)
    parts = rel.split(os.sep, 1)
    return len(parts) == 2 and parts[1] in views.get(parts[0], ())


def writer_proc(args, w, stop, stats, seed):
    """One writer in a process of its own, as every editor is: the mount
    keeps one read record per process and view (docs/editing.md "Concurrent
    saves"), so two writers of one view must not share a process."""
    cfg = {"mnt": args.mnt, "strict": args.strict, "w": w, "seed": seed,
           "stop": "%s.wstop%d" % (args.state, w["id"])}
    w.update(run_child("writeloop", cfg, stop, stats).get("w", {}))


def run_child(cmd, cfg, stop, stats):
    """Run `stress.py CMD CFG` until @stop, then tell it to end (cfg["stop"]
    appears) and add its JSON counts and failures to @stats; its result."""
    p = subprocess.Popen([sys.executable, os.path.abspath(__file__), cmd, json.dumps(cfg)],
                         stdout=subprocess.PIPE)
    stop.wait()
    with open(cfg["stop"], "w"):
        pass
    out, _ = p.communicate()
    os.unlink(cfg["stop"])
    res = json.loads(out.decode() or "{}")
    for k, n in res.get("count", {}).items():
        if k != "bad":  # counted once, by stats.fail() below
            stats.inc(k, n)
    for b in res.get("bad", []):
        who, _, what = b.partition(": ")
        stats.fail(who, what)
    return res


def cmd_writeloop(cfgtext):
    cfg = json.loads(cfgtext)

    class A:
        mnt = cfg["mnt"]
        strict = cfg["strict"]
    stats = Stats()
    stop = threading.Event()
    w = cfg["w"]
    th = threading.Thread(target=writer_main, args=(A, w, stop, stats, cfg["seed"]))
    th.start()
    wait_stop_file(cfg["stop"], stop, th)
    json.dump({"w": w, "count": stats.count, "bad": stats.bad}, sys.stdout)
    return 0


def wait_stop_file(path, stop, th):
    """In a child of run_child(): until @path appears, then stop thread @th."""
    while not os.path.exists(path):
        time.sleep(0.05)
    stop.set()
    th.join()


def reader_cat(args, stop, stats, views, transient):
    """find+cat in a process of its own: its close(2) of a view must not
    count as the close of the process that wrote the view (docs/editing.md:
    FLUSH commits when the closing process wrote last)."""
    cfg = {"mnt": args.mnt, "mover": args.mover, "views": {m: sorted(v) for m, v in views.items()},
           "transient": sorted(transient), "stop": args.state + ".stop"}
    run_child("catloop", cfg, stop, stats)


def cmd_catloop(cfgtext):
    cfg = json.loads(cfgtext)

    class A:
        mnt = cfg["mnt"]
        mover = cfg["mover"]
    stats = Stats()
    stop = threading.Event()
    views = {m: set(v) for m, v in cfg["views"].items()}
    th = threading.Thread(target=cat_walk, args=(A, stop, stats, views, set(cfg["transient"])))
    th.start()
    wait_stop_file(cfg["stop"], stop, th)
    json.dump({"count": stats.count, "bad": stats.bad}, sys.stdout)
    return 0


def cat_walk(args, stop, stats, views, transient):
    while not stop.is_set():
        def onerror(e):
            if e.errno == errno.ENOENT:
                return
            if e.errno == errno.ESTALE and moving(args, e.filename):
                stats.inc("kernel_alias_estale")  # see reader_grep
                return
            stats.fail("find", "%s: %s" % (e.filename, ename(e.errno)))
        for root, dirs, files in os.walk(args.mnt, onerror=onerror):
            dirs.sort()
            for f in sorted(files):
                if stop.is_set():
                    return
                p = os.path.join(root, f)
                isview = classify_path(args, p, views)
                try:
                    with open(p, "rb") as fh:
                        data = fh.read()
                    stats.inc("reads")
                    if isview and not data:
                        rel = os.path.relpath(p, args.mnt)
                        if rel in transient:
                            stats.inc("empty_reads_truncated_view")
                        else:
                            stats.fail("cat", "empty read of %s" % rel)
                except OSError as e:
                    if e.errno == errno.ENOENT and (not isview or moving(args, p)):
                        stats.inc("scratch_vanished" if not moving(args, p) else "moved_away")
                        continue
                    stats.fail("cat", "%s: %s" % (os.path.relpath(p, args.mnt), ename(e.errno)))


def reader_grep(args, stop, stats, views):
    pat = re.compile(r"^grep: (.*): ([^:]+)$")
    while not stop.is_set():
        r = subprocess.run(["grep", "-r", "-c", "-e", "v ", args.mnt], stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, check=False)
        stats.inc("greps")
        for line in r.stderr.decode(errors="replace").splitlines():
            m = pat.match(line)
            if m and m.group(2) == "No such file or directory" and (
                    not classify_path(args, m.group(1), views) or moving(args, m.group(1))):
                stats.inc("scratch_vanished")
                continue
            if m and m.group(2) == "Stale file handle" and moving(args, m.group(1)) and \
                    os.path.basename(m.group(1)) in ("sub", "m.mdl", "anims", "meshes"):
                # A folder looked up under its new name while the kernel's own
                # rename of it still holds the rename lock: the kernel answers
                # ESTALE itself (d_splice_alias cannot move the alias); the
                # daemon never sees the request.
                stats.inc("kernel_alias_estale")
                continue
            stats.fail("grep -r", line)


def cmd_run(args):
    models, writers = plan(args)
    if not writers:
        sys.exit("stress: no writable views with editable lines")
    views = {m: set(vs) for m, vs, _ in models}
    transient = {"%s/%s" % (w["model"], w["view"]) for w in writers if w["kind"] in ("redirect", "truncate")}
    for w in writers:
        print("plan: writer %d %-8s %s/%s line %d" % (w["id"], w["kind"], w["model"], w["view"], w["line"] + 1),
              file=sys.stderr)
    stats = Stats()
    stop = threading.Event()
    ths = []
    rng = random.Random(args.seed + 1)
    for w in writers:
        ths.append(threading.Thread(target=writer_proc, args=(args, w, stop, stats, rng.randrange(1 << 30))))
    if args.mover:
        ths.append(threading.Thread(target=mover_main, args=(args, stop, stats)))
    for k in range(args.readers):
        if k % 2 == 0:
            ths.append(threading.Thread(target=reader_cat, args=(args, stop, stats, views, transient)))
        else:
            ths.append(threading.Thread(target=reader_grep, args=(args, stop, stats, views)))
    t0 = time.monotonic()
    for t in ths:
        t.start()
    try:
        stop.wait(args.seconds)
    finally:
        stop.set()
        for t in ths:
            t.join()
    dt = time.monotonic() - t0
    state = {"seed": args.seed, "seconds": dt, "writers": writers, "count": stats.count, "bad": stats.bad}
    with open(args.state, "w") as f:
        json.dump(state, f, indent=1)
    c = stats.count
    print("run: %.1f s, %d acknowledged saves (%.1f/s), %d refused and retried, %d reads, %d greps, "
          "%d scratch names vanished under a reader, %d empty reads of truncated views, "
          "%d read-backs overwritten by another writer's stale text%s, %d folder renames (%d ESTALE of the kernel's folder alias race), "
          "%d refused as conflicts of which %d false (the conflict was not on the writer's line%s), %d failures"
          % (dt, c.get("saves", 0), c.get("saves", 0) / dt, c.get("refused", 0), c.get("reads", 0),
             c.get("greps", 0), c.get("scratch_vanished", 0), c.get("empty_reads_truncated_view", 0),
             c.get("readback_mismatch", 0), "" if args.strict else " (not counted without --strict)",
             c.get("moves", 0), c.get("kernel_alias_estale", 0), c.get("refused_conflict", 0),
             c.get("false_refusal", 0), "; each fails with --strict" if args.strict else "",
             c.get("bad", 0)), file=sys.stderr)
    for b in stats.bad[:40]:
        print("FAIL: " + b, file=sys.stderr)
    return 1 if stats.bad else 0


def cmd_check(args):
    with open(args.state) as f:
        state = json.load(f)
    bad = 0
    cache = {}
    for w in state["writers"]:
        key = (w["model"], w["view"])
        if key not in cache:
            r = convert(args.convert, "cat", "--root", args.src, os.path.join(args.src, w["model"]), w["view"])
            if r.returncode != 0:
                print("FAIL: %s does not decode (or has no view %s): %s" % (
                    w["model"], w["view"], r.stderr.decode(errors="replace").strip()), file=sys.stderr)
                bad += 1
                cache[key] = None
                continue
            cache[key] = r.stdout.decode("utf-8", errors="surrogateescape").split("\n")
        lines = cache[key]
        if lines is None:
            continue
        got = get_field(lines[w["line"]], w["field"], w["sep"]) if w["line"] < len(lines) else None
        ok_values = ([w["acked"]] if w["acked"] else []) + w["attempts"]
        who = "writer %d (%s %s/%s:%d)" % (w["id"], w["kind"], w["model"], w["view"], w["line"] + 1)
        if w["acked"] is None:
            print("note: %s: no save acknowledged" % who, file=sys.stderr)
        elif got in ok_values:
            print("ok: %s: %d saves (%d refused and retried), SOURCE holds %s" % (
                who, w["saves"], w["refused"], got), file=sys.stderr)
        elif w["exposed"] and not args.strict:
            print("KNOWN: %s: last acknowledged %s, SOURCE holds %s (lost: a stale text of another "
                  "writer passed the stale check; not counted without --strict)" % (who, w["acked"], got),
                  file=sys.stderr)
        else:
            print("FAIL: %s: last acknowledged %s, SOURCE holds %s (lost)" % (who, w["acked"], got),
                  file=sys.stderr)
            bad += 1
    return 1 if bad else 0


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "catloop":
        return cmd_catloop(sys.argv[2])
    if len(sys.argv) == 3 and sys.argv[1] == "writeloop":
        return cmd_writeloop(sys.argv[2])
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--mnt", required=True)
    r.add_argument("--src", required=True)
    r.add_argument("--convert", required=True)
    r.add_argument("--state", required=True)
    r.add_argument("--seed", type=int, default=1)
    r.add_argument("--seconds", type=float, default=30)
    r.add_argument("--readers", type=int, default=2)
    r.add_argument("--mover", default="",
                   help="a SOURCE folder (no writer's model in it) renamed back and forth meanwhile")
    r.add_argument("--strict", action="store_true",
                   help="count lost updates of writers sharing a view or a model with a whole-model writer")
    r.add_argument("models", nargs="+")
    c = sub.add_parser("check")
    c.add_argument("--src", required=True)
    c.add_argument("--convert", required=True)
    c.add_argument("--state", required=True)
    c.add_argument("--strict", action="store_true")
    args = ap.parse_args()
    return cmd_run(args) if args.cmd == "run" else cmd_check(args)


if __name__ == "__main__":
    sys.exit(main())
