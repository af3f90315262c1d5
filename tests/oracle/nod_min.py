"""Minimal, independent NOD (version 7) reader for the view oracle (issue 15).

Written from Nihilistic's "NOD Engine SDK 1.0 - NOD File Specifications"
(field order and types) with the two corrections every public reader makes:
a Vector3 is 12 bytes (the table's "9 bytes" is a typo) and a vertex is 40
bytes (bone index byte + 3 pad bytes). Offsets and types only; it shares no
code with src/formats/nod/nod.c. Values are returned as raw float32 bits (int)
so callers can compare bit for bit; f32() turns bits into a Python float.
"""
import struct


def f32(bits):
    """float value of a float32 given by its 32 bits"""
    return struct.unpack('<f', struct.pack('<I', bits))[0]


class _Cur:
    def __init__(self, data):
        self.d, self.o = data, 0

    def take(self, fmt):
        v = struct.unpack_from('<' + fmt, self.d, self.o)
        self.o += struct.calcsize('<' + fmt)
        return v

    def bits(self, n):
        """n float32 fields as their bit patterns"""
        return list(self.take('%dI' % n))


def _name(raw):
    return raw.split(b'\0', 1)[0]


def read(path):
    """Return a dict: materials, bones, meshnames, vertices, faces, groups.

    bones[i]: {'translate': 3 bits, 'inverse': 12 bits, 'sibling', 'child', 'parent'}
    vertices[k]: {'pos': 3 bits, 'normal': 3 bits, 'uv': 2 bits, 'weight': bits, 'bone': int}
    groups[g]: {'material', 'mesh', 'bone', 'v0', 'nv', 'f0', 'nf'}; the groups cut
    the vertex and face arrays consecutively in file order [SDK "Mesh Group
    Definitions"]; faces[j] = 3 group-local vertex indices.
    """
    with open(path, 'rb') as fh:
        c = _Cur(fh.read())
    version, nmat = c.take('II')
    if version != 7:
        raise ValueError('%s: NOD version %d' % (path, version))
    materials = [_name(c.take('32s')[0]) for _ in range(nmat)]
    nbones, nmeshes, nverts, nfaces, ngroups, flags = c.take('HHIIHI')
    bounds = c.bits(6)
    bones = []
    for _ in range(nbones):
        t = c.bits(3)
        inv = c.bits(12)
        sib, child, parent = c.take('hhh')
        bones.append({'translate': t, 'inverse': inv, 'sibling': sib,
                      'child': child, 'parent': parent})
    meshnames = [_name(c.take('32s')[0]) for _ in range(nmeshes)]
    vertices = []
    for _ in range(nverts):
        pos, normal, uv, w = c.bits(3), c.bits(3), c.bits(2), c.bits(1)[0]
        bone = c.take('B3x')[0]
        vertices.append({'pos': pos, 'normal': normal, 'uv': uv,
                         'weight': w, 'bone': bone})
    if flags & 1:  # HASLOD: one u16 collapse index per vertex
        c.take('%dH' % nverts)
    faces = [list(c.take('HHH')) for _ in range(nfaces)]
    groups = []
    v0 = f0 = 0
    for _ in range(ngroups):
        mat = c.take('i')[0]
        c.take('12x')
        gf, gv, _minv, _gflags, gbone, gmesh = c.take('HHHHBB2x')
        groups.append({'material': mat, 'mesh': gmesh, 'bone': gbone,
                       'v0': v0, 'nv': gv, 'f0': f0, 'nf': gf})
        v0 += gv
        f0 += gf
    if c.o != len(c.d):
        raise ValueError('%s: %d bytes after the groups' % (path, len(c.d) - c.o))
    if v0 != nverts or f0 != nfaces:
        raise ValueError('%s: groups do not partition the arrays' % path)
    return {'version': version, 'flags': flags, 'bounds': bounds,
            'materials': materials, 'bones': bones, 'meshnames': meshnames,
            'vertices': vertices, 'faces': faces, 'groups': groups}


if __name__ == '__main__':
    import sys
    m = read(sys.argv[1])
    print('bones %d meshes %d verts %d faces %d groups %d' % (
        len(m['bones']), len(m['meshnames']), len(m['vertices']),
        len(m['faces']), len(m['groups'])))
