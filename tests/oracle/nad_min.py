"""Minimal, independent NAD (version 3) reader for the view oracle (issue 15).

Written from Nihilistic's "NOD Engine SDK 1.0 - NAD File Specifications":
header (version u32, track count u32, flags u32, duration f32), then per
track (key count u32, bone u32, type u32 0 rotation / 1 translate / 2
scale, keys), a key being 14 float32 (frame, frame scale, value xyz, C xyz,
B xyz, A xyz = 56 bytes), then the tag count u32 and (frame f32, type u32)
per tag. Offsets and types only; no code shared with src/formats/nad/nad.c.
Floats are returned as their 32-bit patterns (int) for bit-exact checks.
"""
import struct


def read(path):
    """Return {'version', 'flags', 'duration', 'tracks', 'tags'}.

    tracks[i] = {'bone', 'type', 'keys'}, keys[k] = 14 float32 bit patterns in
    file order; tags[j] = (frame bits, type).
    """
    with open(path, 'rb') as fh:
        d = fh.read()
    version, ntracks, flags, duration = struct.unpack_from('<IIII', d, 0)
    if version != 3:
        raise ValueError('%s: NAD version %d' % (path, version))
    o = 16
    tracks = []
    for _ in range(ntracks):
        nkeys, bone, ttype = struct.unpack_from('<III', d, o)
        o += 12
        keys = [list(struct.unpack_from('<14I', d, o + 56 * k)) for k in range(nkeys)]
        o += 56 * nkeys
        tracks.append({'bone': bone, 'type': ttype, 'keys': keys})
    ntags = struct.unpack_from('<I', d, o)[0]
    o += 4
    tags = [struct.unpack_from('<II', d, o + 8 * j) for j in range(ntags)]
    o += 8 * ntags
    # hypov8's exporter writes a second zero u32 after a zero tag count
    if len(d) - o not in (0, 4):
        raise ValueError('%s: %d bytes after the tags' % (path, len(d) - o))
    return {'version': version, 'flags': flags, 'duration': duration,
            'tracks': tracks, 'tags': tags}


if __name__ == '__main__':
    import sys
    m = read(sys.argv[1])
    print('%d tracks, %d keys, %d tags' % (
        len(m['tracks']), sum(len(t['keys']) for t in m['tracks']), len(m['tags'])))
