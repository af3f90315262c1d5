#!/usr/bin/env python3
"""Helper for the edit_*.sh integration tests: text edits, and the save
sequences of programs we cannot run in CI, replayed syscall by syscall.

    edit_tool.py subst FILE REGEX FIELD SEP VALUE OUT
        Copy FILE to OUT with one value changed: in the first line matching
        REGEX, token number FIELD (1-based; SEP is "space" = runs of blanks,
        or "comma", where FIELD may also be a column name from the header
        line) becomes VALUE; the rest of the line (indentation, spacing) is
        kept (and so is a CR before the LF). Prints "LINE<TAB>NEWLINE"
        (1-based line number, NEWLINE without CR).
    edit_tool.py get FILE REGEX FIELD SEP
        Print the token subst would replace.
    edit_tool.py append FILE OUT
        Copy FILE to OUT plus one appended line, what `>>` adds: a CSV
        (first line has commas, no '#') gets one more key, a copy of the last
        row with its first column + 1 (and a "time" second column + 0.5);
        an OBJ (has "f " lines) gets its first face again, reversed; any
        other text gets a comment line. Prints "KIND<TAB>LINE" (KIND = key,
        face or comment). CRLF files get a CRLF line.
    edit_tool.py vscode TARGET TEXTFILE
        VS Code's in-place save (diskFileSystemProvider.doWriteFile):
        open(O_WRONLY|O_CREAT|O_TRUNC, 0666), write at 0, fdatasync, close.
    edit_tool.py jetbrains TARGET TEXTFILE
        JetBrains "safe write" (SafeFileOutputStream): write
        TARGET___jb_tmp___, fsync, delete a stale TARGET___jb_old___, rename
        TARGET -> TARGET___jb_old___, rename tmp -> TARGET, delete old.
    edit_tool.py pyreplace TARGET TEXTFILE
        tempfile.mkstemp(dir=TARGET's folder) + write + fsync + close +
        os.replace(tmp, TARGET).
    edit_tool.py writeclose TARGET TEXTFILE [fsync]
        open(O_WRONLY|O_TRUNC), write, [fsync,] close: the plain sequence,
        reporting which step failed.
    edit_tool.py slowwrite TARGET TEXTFILE CMD...
        open(O_WRONLY|O_TRUNC), write the first half of TEXTFILE, run CMD,
        write the rest, close (a save that overlaps an outside change).
    edit_tool.py racer TARGET REGEX FIELD SEP SUFFIX COUNT
        COUNT in-place saves of TARGET in a row (value i of save i is
        "<i><SUFFIX>", placed as in subst), each retried until it lands.
    edit_tool.py nano TARGET LINE NEWLINE
        Run nano in a pseudo-terminal: go to LINE, cut it (^K), type NEWLINE
        and Enter, write out (^O, Enter), exit (^X; "n" if nano asks to save
        after a failed write). Prints nano's status line.

Exit status: 0 success; 1 a step failed (stderr: "<step>: [Errno N] ...",
errno name included); 2 usage.
"""

import errno
import os
import re
import select
import signal
import sys
import tempfile
import time


def fail(step, exc):
    name = errno.errorcode.get(exc.errno, "?") if getattr(exc, "errno", None) else "?"
    sys.stderr.write("%s: %s (%s)\n" % (step, exc, name))
    sys.exit(1)


def read_bytes(path):
    with open(path, "rb") as f:
        return f.read()


def write_all(fd, data):
    off = 0
    while off < len(data):
        off += os.write(fd, data[off:])


def subst_text(text, regex, field, sep, value):
    """(new text, 1-based line number, new line without CR) or None."""
    rx = re.compile(regex)
    lines = text.split("\n")
    if field.isdigit():
        field = int(field)
    elif sep == "comma" and field in lines[0].rstrip("\r").split(","):
        field = lines[0].rstrip("\r").split(",").index(field) + 1
    else:
        return None
    for i, line in enumerate(lines):
        cr = "\r" if line.endswith("\r") else ""
        line = line[: len(line) - len(cr)]
        if not rx.search(line):
            continue
        if sep == "comma":
            parts = line.split(",")
            if field > len(parts):
                return None
            old = parts[field - 1]
            parts[field - 1] = value
            new = ",".join(parts)
        else:
            toks = list(re.finditer(r"\S+", line))
            if field > len(toks):
                return None
            t = toks[field - 1]
            old = t.group(0)
            new = line[: t.start()] + value + line[t.end():]
        lines[i] = new + cr
        return "\n".join(lines), i + 1, new, old
    return None


def cmd_subst(path, regex, field, sep, value, out):
    with open(path, "r", encoding="utf-8", newline="") as f:
        text = f.read()
    r = subst_text(text, regex, field, sep, value)
    if r is None:
        sys.stderr.write("subst: no line of %s matches %r with field %s\n" % (path, regex, field))
        sys.exit(1)
    new_text, n, new, _ = r
    if new_text == text:
        sys.stderr.write("subst: line %d already has %s\n" % (n, value))
        sys.exit(1)
    with open(out, "w", encoding="utf-8", newline="") as f:
        f.write(new_text)
    print("%d\t%s" % (n, new))


def fmt_num(x):
    return ("%.9g" % x) if x != int(x) else str(int(x))


def cmd_append(path, out):
    with open(path, "r", encoding="utf-8", newline="") as f:
        text = f.read()
    eol = "\r\n" if "\r\n" in text else "\n"
    lines = [l.rstrip("\r") for l in text.split("\n") if l.rstrip("\r")]
    faces = [l for l in lines if l.startswith("f ")]
    if lines and "," in lines[0] and not lines[0].startswith("#"):
        header = lines[0].split(",")
        last = lines[-1].split(",")
        last[0] = fmt_num(float(last[0]) + 1)
        if len(header) > 1 and header[1] == "time":
            last[1] = fmt_num(float(last[1]) + 0.5)
        kind, line = "key", ",".join(last)
    elif faces:
        kind, line = "face", "f " + " ".join(reversed(faces[0].split()[1:]))
    else:
        kind, line = "comment", "# appended by the edit_shell test"
    if text and not text.endswith("\n"):
        text += eol
    with open(out, "w", encoding="utf-8", newline="") as f:
        f.write(text + line + eol)
    print("%s\t%s" % (kind, line))


def cmd_vscode(target, textfile):
    data = read_bytes(textfile)
    try:
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666)
    except OSError as e:
        fail("open", e)
    try:
        # doWriteFile: positional writes from 0 until everything is written
        written = 0
        while written < len(data):
            written += os.pwrite(fd, data[written:], written)
    except OSError as e:
        fail("write", e)
    try:
        os.fdatasync(fd)
    except OSError as e:
        fail("fdatasync", e)
    try:
        os.close(fd)
    except OSError as e:
        fail("close", e)


def cmd_jetbrains(target, textfile):
    data = read_bytes(textfile)
    tmp = target + "___jb_tmp___"
    old = target + "___jb_old___"
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    except OSError as e:
        fail("open " + tmp, e)
    try:
        write_all(fd, data)
        os.fsync(fd)
    except OSError as e:
        fail("write/fsync " + tmp, e)
    try:
        os.close(fd)
    except OSError as e:
        fail("close " + tmp, e)
    try:
        if os.path.lexists(old):
            os.unlink(old)
        os.rename(target, old)
    except OSError as e:
        fail("rename target -> ___jb_old___", e)
    try:
        os.rename(tmp, target)
    except OSError as e:
        fail("rename ___jb_tmp___ -> target", e)
    try:
        os.unlink(old)
    except OSError as e:
        fail("unlink ___jb_old___", e)


def cmd_pyreplace(target, textfile):
    data = read_bytes(textfile)
    try:
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(os.path.abspath(target)))
    except OSError as e:
        fail("mkstemp", e)
    try:
        write_all(fd, data)
        os.fsync(fd)
    except OSError as e:
        fail("write/fsync " + tmp, e)
    try:
        os.close(fd)
    except OSError as e:
        fail("close " + tmp, e)
    try:
        os.replace(tmp, target)
    except OSError as e:
        fail("os.replace", e)


def cmd_writeclose(target, textfile, *opts):
    data = read_bytes(textfile)
    try:
        fd = os.open(target, os.O_WRONLY | os.O_TRUNC)
    except OSError as e:
        fail("open", e)
    try:
        write_all(fd, data)
    except OSError as e:
        fail("write", e)
    if "fsync" in opts:
        try:
            os.fsync(fd)
        except OSError as e:
            os.close(fd)
            fail("fsync", e)
    try:
        os.close(fd)
    except OSError as e:
        fail("close", e)


def cmd_get(path, regex, field, sep):
    with open(path, "r", encoding="utf-8", newline="") as f:
        r = subst_text(f.read(), regex, field, sep, "")
    if r is None:
        sys.exit(1)
    print(r[3])


def cmd_slowwrite(target, textfile, *cmd):
    """open(O_WRONLY|O_TRUNC), write the first half, run CMD (e.g. change
    SOURCE behind the mount's back), write the rest, close."""
    import subprocess
    data = read_bytes(textfile)
    half = len(data) // 2
    try:
        fd = os.open(target, os.O_WRONLY | os.O_TRUNC)
        write_all(fd, data[:half])
    except OSError as e:
        fail("open/write", e)
    rc = subprocess.call(list(cmd))
    if rc != 0:
        sys.stderr.write("slowwrite: command exited %d\n" % rc)
        sys.exit(3)
    try:
        os.pwrite(fd, data[half:], half)
    except OSError as e:
        fail("write", e)
    try:
        os.close(fd)
    except OSError as e:
        fail("close", e)


def cmd_racer(target, regex, field, sep, suffix, count):
    """COUNT saves of TARGET in a row, save i setting the value "<i><SUFFIX>"
    (read the view, change the value, open O_TRUNC, write, close), each
    retried until it lands (at most 100 tries). Prints
    "saves=N refused=R errnos=...". Exit 1 when a save never lands."""
    refused = 0
    errnos = {}
    for i in range(1, int(count) + 1):
        value = "%d%s" % (i, suffix)
        for attempt in range(100):
            try:
                with open(target, "r", encoding="utf-8", newline="") as f:
                    text = f.read()
                r = subst_text(text, regex, field, sep, value)
                if r is None:
                    raise OSError(errno.EBADMSG, "no value to change in the view")
                fd = os.open(target, os.O_WRONLY | os.O_TRUNC)
                try:
                    write_all(fd, r[0].encode("utf-8"))
                finally:
                    os.close(fd)
                break
            except OSError as e:
                refused += 1
                name = errno.errorcode.get(e.errno, str(e.errno))
                errnos[name] = errnos.get(name, 0) + 1
                time.sleep(0.01)
        else:
            sys.stderr.write("racer: save %d of %s never landed (%r)\n" % (i, target, errnos))
            sys.exit(1)
    print("saves=%s refused=%d errnos=%s" % (count, refused, ",".join("%s:%d" % kv for kv in sorted(errnos.items())) or "-"))


def cmd_nano(target, line, newline):
    import fcntl
    import pty
    import struct
    import termios

    pid, master = pty.fork()
    if pid == 0:
        try:
            fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 120, 0, 0))
        except OSError:
            pass
        os.environ["TERM"] = "xterm"
        os.execvp("nano", ["nano", "--ignorercfiles", "--locking", "+%d" % int(line), target])
        os._exit(127)

    screen = bytearray()

    def pump(until, timeout):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if until is not None and re.search(until, bytes(screen)):
                return True
            r, _, _ = select.select([master], [], [], 0.05)
            if r:
                try:
                    chunk = os.read(master, 65536)
                except OSError:
                    return until is None
                if not chunk:
                    return until is None
                screen.extend(chunk)
        return until is None

    def send(s):
        os.write(master, s.encode() if isinstance(s, str) else s)

    def give_up(what):
        sys.stderr.write("nano: %s; screen bytes:\n%r\n" % (what, bytes(screen[-2000:])))
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
        os.waitpid(pid, 0)
        sys.exit(1)

    if not pump(rb"Help", 10):
        give_up("no editor screen")
    screen.clear()
    send(b"\x0b")  # ^K cut the line
    pump(None, 0.2)
    send(newline + "\r")
    pump(None, 0.2)
    screen.clear()
    send(b"\x0f")  # ^O write out
    if not pump(rb"File Name to Write", 10):
        give_up("no write-out prompt")
    screen.clear()
    send(b"\r")
    if not pump(rb"Wrote|Error writing|rror", 20):
        give_up("no answer to the write")
    pump(None, 0.3)
    status = re.findall(rb"\[ ([^\]]*) \]", bytes(screen))
    msg = status[-1].decode("utf-8", "replace").strip() if status else ""
    ok = b"Wrote" in screen
    screen.clear()
    send(b"\x18")  # ^X exit
    if pump(rb"Save modified buffer", 2):
        send(b"n")
    deadline = time.monotonic() + 10
    rc = None
    while time.monotonic() < deadline:
        pump(None, 0.1)
        done, status_ = os.waitpid(pid, os.WNOHANG)
        if done:
            rc = status_
            break
    if rc is None:
        give_up("nano did not exit")
    print(msg)
    if not ok:
        sys.stderr.write("nano: %s\n" % msg)
        sys.exit(1)
    if not os.WIFEXITED(rc) or os.WEXITSTATUS(rc) != 0:
        sys.stderr.write("nano: exit status %r\n" % rc)
        sys.exit(1)


def main(argv):
    cmds = {
        "subst": (cmd_subst, 6),
        "append": (cmd_append, 2),
        "get": (cmd_get, 4),
        "vscode": (cmd_vscode, 2),
        "jetbrains": (cmd_jetbrains, 2),
        "pyreplace": (cmd_pyreplace, 2),
        "writeclose": (cmd_writeclose, None),
        "slowwrite": (cmd_slowwrite, None),
        "racer": (cmd_racer, 6),
        "nano": (cmd_nano, 3),
    }
    if len(argv) < 2 or argv[1] not in cmds:
        sys.stderr.write(__doc__)
        return 2
    fn, nargs = cmds[argv[1]]
    args = argv[2:]
    if nargs is not None and len(args) != nargs:
        sys.stderr.write(__doc__)
        return 2
    fn(*args)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
