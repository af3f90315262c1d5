#!/usr/bin/env python3
"""Write a random but valid NIL v27 level (layout: docs/formats/nil.md).

No NIL file is public, so tests that need one make it:
    nil_gen.py OUT NSECTORS SEED
NSECTORS sectors (1-3 materials, one per sector up to 3), each with 1-4
planes, 0-7 split planes, no boxes, 4-23 vertices and 3-32 wall corners
using one material. The same arguments always give the same bytes.
"""
import random
import struct
import sys

MATS = ["London\\SBIwall1_2_L", "London\\SBIfloor1_L", "New_York\\SWfloor1_2_NY"]


def main():
    out, nsec, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    rnd = random.Random(seed)

    def plane():
        n = [0.0, 0.0, 0.0]
        n[rnd.randrange(3)] = rnd.choice((-1.0, 1.0))
        return struct.pack("<4f", *n, rnd.uniform(-500, 500))

    def sector(nmat):
        b = struct.pack("<I3f", rnd.randrange(4), 0.1, 0.1, 0.1)
        np_ = 1 + rnd.randrange(4)
        b += struct.pack("<B", np_) + b"".join(plane() for _ in range(np_))
        ns = rnd.randrange(8)
        b += struct.pack("<H", ns) + b"".join(plane() for _ in range(ns))
        b += struct.pack("<H", 0)
        nv = 4 + rnd.randrange(20)
        b += struct.pack("<H", nv) + b"".join(
            struct.pack("<3f", *(rnd.uniform(-100, 100) for _ in range(3))) for _ in range(nv))
        nw = 3 + rnd.randrange(30)
        base = rnd.randrange(nmat)
        b += struct.pack("<H", nw)
        for _ in range(nw):
            b += struct.pack("<HH4B4f", rnd.randrange(nv), base, 200, 190, 180, 255,
                             *(rnd.uniform(-4, 4) for _ in range(4)))
        return b

    mats = MATS[:min(nsec, len(MATS))]
    h = b"NIL\x10" + struct.pack("<I", 27) + bytes(rnd.randrange(256) for _ in range(72))
    h += struct.pack("<3f", 0.25, 0.25, 0.3) + struct.pack("<I", len(mats))
    h += b"".join(m.encode("latin-1").ljust(32, b"\0") for m in mats)
    h += struct.pack("<I", nsec)
    with open(out, "wb") as f:
        f.write(h + b"".join(sector(len(mats)) for _ in range(nsec)))


if __name__ == "__main__":
    main()
