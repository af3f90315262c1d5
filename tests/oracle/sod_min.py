"""Minimal, independent SOD (Storm3D) reader for the view oracle (issue 15).

Written from Steve Williams' "Storm3D Object Definition (SOD) File Format"
(version 1.8: header, lighting materials, nodes with a MATRIX34 {RIGHT, UP,
FRONT, POSITION}, mesh payload, animation channels) plus the per-version
differences of the public readers (SomaZ's Blender_ST_Armada_Tools SOD.py,
summed up in docs/formats/sod.md): legacy block in 1.4-1.6, texture
material from 1.7, alpha byte per material from 1.9, mesh prefix extras in
1.91/1.92/1.93. Identifiers are u16 length + bytes. Offsets and types only;
no code shared with src/formats/sod/sod.c. Floats are float32 bit patterns.
"""
import struct


class _Cur:
    def __init__(self, data):
        self.d, self.o = data, 0

    def take(self, fmt):
        v = struct.unpack_from('<' + fmt, self.d, self.o)
        self.o += struct.calcsize('<' + fmt)
        return v

    def u8(self):
        return self.take('B')[0]

    def u16(self):
        return self.take('H')[0]

    def u32(self):
        return self.take('I')[0]

    def bits(self, n):
        return list(self.take('%dI' % n))

    def ident(self):
        n = self.u16()
        s = self.d[self.o:self.o + n]
        self.o += n
        return s


def read(path):
    """Return {'version', 'nodes', 'channels'}.

    nodes[i] = {'type', 'name', 'parent', 'matrix': 12 bits (right, up,
    front, position), 'mesh': None or {'verts': [3 bits], 'uvs': [2 bits],
    'groups': [{'material', 'faces': [[v0, t0, v1, t1, v2, t2]]}]}};
    channels[j] = {'node', 'period' bits, 'type', 'keys': [12 or 1 bits]}.
    """
    with open(path, 'rb') as fh:
        c = _Cur(fh.read())
    magic = c.take('10s')[0]
    if magic not in (b'Storm3D_SW', b'StarTrekDB'):
        raise ValueError('%s: not a SOD' % path)
    vbits = c.u32()
    ver = round(struct.unpack('<f', struct.pack('<I', vbits))[0], 2)
    if ver <= 1.6:  # legacy block
        for _ in range(c.u16()):
            c.ident(), c.ident(), c.take('7x')
    for _ in range(c.u16()):  # lighting materials
        c.ident()
        c.take('10I B')
        if ver >= 1.9:
            c.u8()
    nodes = []
    for _ in range(c.u16()):
        ntype = c.u16()
        name, parent = c.ident(), c.ident()
        node = {'type': ntype, 'name': name, 'parent': parent,
                'matrix': c.bits(12), 'mesh': None}
        if ntype == 12:
            c.ident()
        elif ntype == 1:
            node['mesh'] = _mesh(c, ver)
        elif ntype not in (0, 3, 11):
            raise ValueError('%s: node type %d' % (path, ntype))
        nodes.append(node)
    channels = []
    for _ in range(c.u16()):
        node = c.ident()
        nkeys = c.u16()
        period = c.u32()
        ctype = c.u16()
        width = {0: 12, 5: 1}[ctype]
        keys = [c.bits(width) for _ in range(nkeys)]
        channels.append({'node': node, 'period': period, 'type': ctype, 'keys': keys})
    if ver >= 1.6:  # texture animation references
        for _ in range(c.u16()):
            c.u8(), c.ident(), c.ident()
            if ver >= 1.8:
                c.u32()  # playback offset
    if c.o != len(c.d):
        raise ValueError('%s: %d bytes left after the references' % (path, len(c.d) - c.o))
    return {'version': ver, 'nodes': nodes, 'channels': channels}


def _mesh(c, ver):
    ntex = 1
    if ver >= 1.7:
        c.ident()  # texture material
    if ver == 1.93:
        _flags, ntex = c.u32(), c.u32()
    c.ident()  # texture
    if ver == 1.91:
        c.u16()
    elif ver == 1.92:
        c.ident(), c.u16()  # borg texture
    elif ver == 1.93:
        c.u32()
        if ntex == 2:
            c.ident(), c.u32()  # bump texture, bump type
        c.ident(), c.u16()  # borg texture
    nv, nt, ng = c.take('HHH')
    verts = [c.bits(3) for _ in range(nv)]
    uvs = [c.bits(2) for _ in range(nt)]
    groups = []
    for _ in range(ng):
        nf = c.u16()
        mat = c.ident()
        groups.append({'material': mat,
                       'faces': [list(c.take('6H')) for _ in range(nf)]})
    c.u8()  # cull type
    c.take('%dH' % c.u16())
    return {'verts': verts, 'uvs': uvs, 'groups': groups}


if __name__ == '__main__':
    import sys
    m = read(sys.argv[1])
    print('version %s, %d nodes, %d meshes, %d channels' % (
        m['version'], len(m['nodes']), sum(1 for n in m['nodes'] if n['mesh']),
        len(m['channels'])))
