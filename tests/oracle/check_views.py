"""View oracle for NOD, NAD and SOD (issue 15): python3 check_views.py MODEL VIEWDIR

VIEWDIR holds the views of MODEL as `legacyfs-convert extract MODEL VIEWDIR`
(or the mount) wrote them. Every value of the views named below is parsed
from the view TEXT with the small parsers of this file and compared with the
value the minimal readers (nod_min.py, nad_min.py, sod_min.py: offsets and
types from the format documents, no code shared with src/) read straight
from MODEL's bytes. Floats are compared bit for bit: the printed decimal read
as float32 must give the stored float32 (the views promise shortest
round-trip text; `nan:XXXXXXXX` gives the bits). The only transforms are the
documented ones, each justified where it is applied:
  NOD  meshes/*.obj, model.obj: v, vt (u, 1 - v), vn, f; model.txt: bones, verts
  SOD  meshes/*.obj: v, vt, g, f; model.txt: node matrices; anims/*.csv: keys;
       model.obj: every vertex = its node's local vertex placed by the node
       matrices of the reader up the parent chain (deliverable 4)
  NAD  tracks/*.csv: every key's 14 floats; tags.csv
Prints one line per mismatch (at most 20 per file) and exits 1 when any.
"""
import os
import struct
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nad_min  # noqa: E402
import nod_min  # noqa: E402
import sod_min  # noqa: E402

ERRORS = []
COUNT = [0]  # values compared


def err(msg):
    ERRORS.append(msg)


def bits(text):
    """float32 bits of a printed number (shortest text or nan:XXXXXXXX)"""
    if text.startswith('nan:'):
        return int(text[4:], 16)
    return struct.unpack('<I', struct.pack('<f', float(text)))[0]


def f32(b):
    return struct.unpack('<f', struct.pack('<I', b))[0]


def to_bits(x):
    """float32 bits of a double (round to nearest, as a C cast)"""
    return struct.unpack('<I', struct.pack('<f', x))[0]


def same(where, text, want, source='the bytes hold'):
    """compare one printed float with stored (or placed) float32 bits"""
    COUNT[0] += 1
    try:
        got = bits(text)
    except (ValueError, OverflowError):
        err('%s: %r is not a float' % (where, text))
        return
    if got != want:
        err('%s: view says %s, %s %r (0x%08x)' % (where, text, source, f32(want), want))


def safe_name(raw, used):
    """file-name component of a node/mesh name (docs/naming.md rule 1, 2, 4)"""
    out = b''
    for b in raw:
        out += b'%%%02X' % b if b in (0x2F, 0x25) or b < 0x20 or b == 0x7F else bytes([b])
    out = out.decode('utf-8', 'surrogateescape')
    out = {'': '%00', '.': '%2E', '..': '%2E%2E'}.get(out, out)
    name, k = out, 2
    while name in used:
        name, k = '%s~%d' % (out, k), k + 1
    used.add(name)
    return name


def read_obj(path):
    """statements of an OBJ: {'v': [[str]], 'vt', 'vn', 'o': [(name, v index)],
    'g': [...], 'f': [(o count, g count, [corner strings])]}"""
    obj = {'v': [], 'vt': [], 'vn': [], 'o': [], 'g': [], 'f': []}
    with open(path, encoding='utf-8', errors='surrogateescape') as fh:
        for line in fh:
            t = line.split()
            if not t or t[0].startswith('#'):
                continue
            if t[0] in ('v', 'vt', 'vn'):
                obj[t[0]].append(t[1:])
            elif t[0] in ('o', 'g'):
                obj[t[0]].append((' '.join(t[1:]), len(obj['v']), len(obj['vt'])))
            elif t[0] == 'f':
                obj['f'].append((len(obj['o']), len(obj['g']), t[1:]))
    return obj


def read_csv(path):
    with open(path) as fh:
        rows = [line.rstrip('\n').split(',') for line in fh if line.strip()]
    return rows[0], rows[1:]


def text_blocks(path, opener):
    """model.txt: list of (header tokens, {keyword: [token lists]}) for every
    block whose first token is `opener` (`node`), in file order"""
    blocks = []
    cur = None
    with open(path) as fh:
        for line in fh:
            t = line.split()
            if not t or t[0].startswith('#'):
                continue
            if t[0] == opener:
                cur = (t, {})
                blocks.append(cur)
            elif t[0].startswith('end'):
                cur = None
            elif cur is not None:
                cur[1].setdefault(t[0], []).append(t[1:])
    return blocks


def uv_flip(vbits):
    """NOD OBJ vt v: docs/formats/nod.md "UV v runs downwards (Direct3D) ...
    The OBJ views print vt u 1-v": 1 - stored v in double, rounded to float32"""
    return to_bits(1.0 - f32(vbits))


def check_nod(path, vd):
    m = nod_min.read(path)
    verts, faces = m['vertices'], m['faces']
    used = set()
    whole = read_obj(os.path.join(vd, 'model.obj'))
    if len(whole['v']) != len(verts):
        err('model.obj: %d v rows, the file has %d vertices' % (len(whole['v']), len(verts)))
    for gi, g in enumerate(m['groups']):
        mesh = m['meshnames'][g['mesh']] if g['mesh'] < len(m['meshnames']) else b'mesh%d' % g['mesh']
        name = safe_name(mesh + b'.%d' % gi, used)
        rel = 'meshes/%s.obj' % name
        if not os.path.exists(os.path.join(vd, rel)):
            err('%s: missing' % rel)
            continue
        part = read_obj(os.path.join(vd, rel))
        gv = verts[g['v0']:g['v0'] + g['nv']]
        gf = [f for f in faces[g['f0']:g['f0'] + g['nf']] if max(f) < g['nv']]
        for obj, base, label in ((part, 0, rel), (whole, g['v0'], 'model.obj')):
            # model.obj (deliverable 4): NOD vertices are stored in model space,
            # rest pose [SDK "Coordinate systems"], so the node transform from a
            # group's vertex to model.obj is the identity; bones do not move the
            # rest pose (docs/formats/nod.md "Spaces and axes").
            for k, v in enumerate(gv):
                if base + k >= len(obj['v']):
                    err('%s: vertex %d missing' % (label, base + k))
                    break
                where = '%s v %d' % (label, base + k + 1)
                for a in range(3):
                    same(where, obj['v'][base + k][a], v['pos'][a])
                    same(where + ' vn', obj['vn'][base + k][a], v['normal'][a])
                same(where + ' vt u', obj['vt'][base + k][0], v['uv'][0])
                same(where + ' vt v (1-v)', obj['vt'][base + k][1], uv_flip(v['uv'][1]))
            fl = [f for f in obj['f'] if obj is part or f[0] == gi + 1]
            if len(fl) != len(gf):
                err('%s group %d: %d faces, the file has %d' % (label, gi, len(fl), len(gf)))
            for j, (f, want) in enumerate(zip(fl, gf)):
                got = [[int(x) - 1 for x in c.split('/')] for c in f[2]]
                exp = [[base + i] * 3 for i in want]
                if got != exp:
                    err('%s group %d face %d: %s, the file has %s' % (label, gi, j, f[2], want))
        if part['v'] and len(part['v']) != g['nv']:
            err('%s: %d v rows, group has %d vertices' % (rel, len(part['v']), g['nv']))
    _no_extra(vd, 'meshes', used)
    if len(whole['o']) != len(m['groups']):
        err('model.obj: %d objects for %d groups' % (len(whole['o']), len(m['groups'])))
    txt = os.path.join(vd, 'model.txt')
    bones = [b for b in text_blocks(txt, 'node') if b[0][1] == 'bone']
    if len(bones) != len(m['bones']):
        err('model.txt: %d bone blocks, the file has %d bones' % (len(bones), len(m['bones'])))
    for i, ((_, kv), b) in enumerate(zip(bones, m['bones'])):
        where = 'model.txt bone%d' % i
        for a in range(3):
            same(where + ' resttranslate', kv['resttranslate'][0][a], b['translate'][a])
        inv = [r for r in kv['restinverse']]
        if [r[0] for r in inv] != ['x', 'y', 'z', 't']:
            err(where + ': restinverse rows are not x y z t')
        for r in range(4):
            for a in range(3):
                same('%s restinverse %s' % (where, inv[r][0]), inv[r][1 + a], b['inverse'][3 * r + a])
        for key in ('sibling', 'child', 'parent'):
            if int(kv[key][0][0]) != b[key]:
                err('%s %s: %s, the file has %d' % (where, key, kv[key][0][0], b[key]))
    rows = _txt_rows(txt, 'verts', len(verts))
    for k, (r, v) in enumerate(zip(rows, verts)):
        want = v['pos'] + v['normal'] + v['uv'] + [v['weight']]
        for a in range(9):
            same('model.txt verts row %d field %d' % (k, a), r[a], want[a])
        if int(r[9]) != v['bone']:
            err('model.txt verts row %d bone %s, the file has %d' % (k, r[9], v['bone']))


def _no_extra(vd, sub, used):
    d = os.path.join(vd, sub)
    extra = set(os.listdir(d)) - {u + '.obj' for u in used} if os.path.isdir(d) else set()
    if extra:
        err('%s/: views of no mesh: %s' % (sub, sorted(extra)))


def _txt_rows(path, keyword, n):
    """the n rows after `keyword N` in model.txt (comment lines skipped)"""
    with open(path) as fh:
        lines = [ln.split() for ln in fh]
    for i, t in enumerate(lines):
        if t and t[0] == keyword:
            rows = [r for r in lines[i + 1:] if r and not r[0].startswith('#')][:n]
            if int(t[1]) != n:
                err('model.txt: %s %s, the file has %d' % (keyword, t[1], n))
            return rows
    err('model.txt: no %s line' % keyword)
    return []


TRACK_TYPES = {0: 'rotation', 1: 'translation', 2: 'scale'}
TAGS = ['lwalk', 'rwalk', 'lrun', 'rrun', 'fire', 'strike', 'cast', 'fall', 'project',
        'flap', 'suck', 'idle', 'idle2', 'codex1', 'codex2', 'codex3', 'repeat',
        'repeatto', 'throwdeath']  # SDK "Keyframe Tag Meanings", lower case


def check_nad(path, vd):
    m = nad_min.read(path)
    used = set()
    names = set(os.listdir(os.path.join(vd, 'tracks')))
    for ti, t in enumerate(m['tracks']):
        base = 'bone%d.%s' % (t['bone'], TRACK_TYPES.get(t['type'], 'type%d' % t['type']))
        rel = 'tracks/%s.csv' % safe_name(base.encode(), used)
        names.discard(rel[7:])
        if not os.path.exists(os.path.join(vd, rel)):
            err('%s: missing (track %d)' % (rel, ti))
            continue
        head, rows = read_csv(os.path.join(vd, rel))
        if head != ['frame', 'frame_scale', 'x', 'y', 'z', 'c_x', 'c_y', 'c_z',
                    'b_x', 'b_y', 'b_z', 'a_x', 'a_y', 'a_z']:
            err('%s: header %s' % (rel, head))
        if len(rows) != len(t['keys']):
            err('%s: %d rows, track %d has %d keys' % (rel, len(rows), ti, len(t['keys'])))
        for k, (r, key) in enumerate(zip(rows, t['keys'])):
            for a in range(14):
                same('%s key %d %s' % (rel, k, head[a]), r[a], key[a])
    if names:
        err('tracks/: views of no track: %s' % sorted(names))
    head, rows = read_csv(os.path.join(vd, 'tags.csv'))
    if len(rows) != len(m['tags']):
        err('tags.csv: %d rows, the file has %d tags' % (len(rows), len(m['tags'])))
    for j, (r, (fb, ty)) in enumerate(zip(rows, m['tags'])):
        same('tags.csv row %d frame' % j, r[0], fb)
        if r[1] != (TAGS[ty] if ty < len(TAGS) else str(ty)):
            err('tags.csv row %d: tag %s, the file has %d' % (j, r[1], ty))


def place(nodes, byname, i, p):
    """point p of node i in model space: docs/formats/sod.md "model.obj" (and
    the spec's MATRIX34 {RIGHT, UP, FRONT, POSITION}, local to the parent):
    p -> p.x*right + p.y*up + p.z*front + position, up the parent chain, in
    double"""
    seen = set()
    while i is not None:
        if i in seen:
            return None
        seen.add(i)
        r = [f32(b) for b in nodes[i]['matrix']]
        p = [p[0] * r[a] + p[1] * r[3 + a] + p[2] * r[6 + a] + r[9 + a] for a in range(3)]
        i = byname.get(nodes[i]['parent'])
    return p


def shown(nodes, byname):
    """indices of the nodes model.obj shows: under each LOD control node only
    the child subtree with the most faces, the first on a tie (sod.md "LOD")"""
    kids = {}
    for i, n in enumerate(nodes):
        kids.setdefault(byname.get(n['parent']), []).append(i)

    def faces(i, depth=0):
        n = nodes[i]['mesh']
        own = sum(len(g['faces']) for g in n['groups']) if n else 0
        return own + (sum(faces(c, depth + 1) for c in kids.get(i, []) if depth < len(nodes)))

    out, stack = [], list(kids.get(None, []))
    visited = set()
    while stack:
        i = stack.pop(0)
        if i in visited:
            continue
        visited.add(i)
        out.append(i)
        ch = kids.get(i, [])
        if nodes[i]['type'] == 11 and ch:
            best = max(faces(c) for c in ch)
            ch = [next(c for c in ch if faces(c) == best)]
        stack.extend(ch)
    return set(out)


def check_sod(path, vd):
    m = sod_min.read(path)
    nodes = m['nodes']
    byname = {}
    for i, n in enumerate(nodes):
        byname.setdefault(n['name'], i)
    used, files = set(), {}
    for i, n in enumerate(nodes):
        if n['mesh'] is None:
            continue
        rel = 'meshes/%s.obj' % safe_name(n['name'], used)
        files[i] = rel
        if not os.path.exists(os.path.join(vd, rel)):
            err('%s: missing' % rel)
            continue
        obj, mesh = read_obj(os.path.join(vd, rel)), n['mesh']
        if len(obj['v']) != len(mesh['verts']) or len(obj['vt']) != len(mesh['uvs']):
            err('%s: %d v / %d vt rows, node has %d / %d' % (
                rel, len(obj['v']), len(obj['vt']), len(mesh['verts']), len(mesh['uvs'])))
        for k, (row, v) in enumerate(zip(obj['v'], mesh['verts'])):
            for a in range(3):
                same('%s v %d' % (rel, k + 1), row[a], v[a])
        # SOD OBJ vt are the stored texture coordinates (sod.md "meshes/<node>.obj")
        for k, (row, uv) in enumerate(zip(obj['vt'], mesh['uvs'])):
            for a in range(2):
                same('%s vt %d' % (rel, k + 1), row[a], uv[a])
        if len(obj['g']) != len(mesh['groups']):
            err('%s: %d g lines, node has %d lighting groups' % (rel, len(obj['g']), len(mesh['groups'])))
        for gi, g in enumerate(mesh['groups']):
            fl = [f[2] for f in obj['f'] if f[1] == gi + 1]
            if len(fl) != len(g['faces']):
                err('%s group %d: %d faces, the file has %d' % (rel, gi, len(fl), len(g['faces'])))
            for j, (c, want) in enumerate(zip(fl, g['faces'])):
                got = [int(x) - 1 for corner in c for x in corner.split('/')]
                if got != want:
                    err('%s group %d face %d: %s, the file has %s' % (rel, gi, j, c, want))
    _no_extra(vd, 'meshes', used)
    blocks = text_blocks(os.path.join(vd, 'model.txt'), 'node')
    if len(blocks) != len(nodes):
        err('model.txt: %d node blocks, the file has %d nodes' % (len(blocks), len(nodes)))
    for i, ((_, kv), n) in enumerate(zip(blocks, nodes)):
        for r, key in enumerate(('right', 'up', 'front', 'position')):
            for a in range(3):
                same('model.txt node %d %s' % (i, key), kv[key][0][a], n['matrix'][3 * r + a])
    used = set()
    for ci, ch in enumerate(m['channels']):
        rel = 'anims/%s.csv' % safe_name(ch['node'], used)
        if not os.path.exists(os.path.join(vd, rel)):
            err('%s: missing (channel %d)' % (rel, ci))
            continue
        head, rows = read_csv(os.path.join(vd, rel))
        cols = ['scale'] if ch['type'] == 5 else ['%s_%s' % (a, x) for a in (
            'right', 'up', 'front', 'position') for x in 'xyz']
        if head != ['key', 'time'] + cols:
            err('%s: header %s' % (rel, head))
        if len(rows) != len(ch['keys']):
            err('%s: %d rows, channel has %d keys' % (rel, len(rows), len(ch['keys'])))
        for k, (r, key) in enumerate(zip(rows, ch['keys'])):
            if r[0] != str(k):
                err('%s row %d: key %s' % (rel, k, r[0]))
            # time = key x period / number of keys: the spec's keys "evenly
            # spaced over time 'channel_period'" (sod.md "anims/<node>.csv")
            same('%s key %d time' % (rel, k), r[1],
                 to_bits(k * f32(ch['period']) / len(ch['keys'])), 'key x period / keys gives')
            for a, b in enumerate(key):
                same('%s key %d %s' % (rel, k, head[2 + a]), r[2 + a], b)
    # model.obj (deliverable 4): each shown mesh node's local vertices placed
    # by the reader's node matrices equal model.obj's vertices of that object
    whole = read_obj(os.path.join(vd, 'model.obj'))
    objs = {}
    for j, (name, start, tstart) in enumerate(whole['o']):
        end = whole['o'][j + 1][1] if j + 1 < len(whole['o']) else len(whole['v'])
        tend = whole['o'][j + 1][2] if j + 1 < len(whole['o']) else len(whole['vt'])
        faces = [[int(x) - 1 - (start, tstart)[q % 2] for q, x in
                  enumerate('/'.join(f[2]).split('/'))] for f in whole['f'] if f[0] == j + 1]
        objs[name] = (whole['v'][start:end], whole['vt'][tstart:tend], faces)
    want = [i for i in sorted(shown(nodes, byname)) if nodes[i]['mesh'] is not None
            and place(nodes, byname, i, [0, 0, 0]) is not None]
    names = [files[i][7:-4] for i in want]
    if sorted(names) != sorted(objs):
        err('model.obj: objects %s, expected %s' % (sorted(objs), sorted(names)))
    for i, name in zip(want, names):
        rows, uvs, faces = objs.get(name, ([], [], []))
        mesh = nodes[i]['mesh']
        local = mesh['verts']
        if len(uvs) != len(mesh['uvs']):
            err('model.obj %s: %d vt rows, node has %d' % (name, len(uvs), len(mesh['uvs'])))
        for k, (row, uv) in enumerate(zip(uvs, mesh['uvs'])):
            for a in range(2):
                same('model.obj %s vt %d' % (name, k + 1), row[a], uv[a])
        stored = [f for g in mesh['groups'] for f in g['faces']]
        if faces != stored:
            err('model.obj %s: faces (object-relative) differ from the node\'s' % name)
        if len(rows) != len(local):
            err('model.obj %s: %d v rows, node has %d vertices' % (name, len(rows), len(local)))
        for k, (row, v) in enumerate(zip(rows, local)):
            p = place(nodes, byname, i, [f32(b) for b in v])
            for a in range(3):
                want = to_bits(p[a])
                # a computed zero's sign depends on the order of the additions
                # (x + -0 vs -0 + x), which the docs do not fix: -0 == +0 here
                if want & 0x7FFFFFFF == 0 and row[a] in ('0', '-0'):
                    continue
                same('model.obj %s v %d' % (name, k + 1), row[a], want,
                     'the bytes placed by the node matrices give')


def main():
    path, vd = sys.argv[1], sys.argv[2]
    ext = path.rsplit('.', 1)[-1].lower()
    {'nod': check_nod, 'nad': check_nad, 'sod': check_sod}[ext](path, vd)
    for e in ERRORS[:20]:
        print('%s: %s' % (os.path.basename(path), e))
    if len(ERRORS) > 20:
        print('%s: ... %d more' % (os.path.basename(path), len(ERRORS) - 20))
    print('%s: %d values compared, %d mismatches' % (os.path.basename(path), COUNT[0], len(ERRORS)))
    sys.exit(1 if ERRORS else 0)


if __name__ == '__main__':
    main()
