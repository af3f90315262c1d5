#!/usr/bin/env python3
"""Write a synthetic Neverwinter Nights game install, for tests and benches.

Independent of the project's code (pure Python 3, struct only): KEY V1 and
BIFF V1 (BioWare, "BioWare Aurora Engine - Key and BIF File Formats" §2, §3),
ERF V1.0 (BioWare, "... Encapsulated Resource File Format") and a minimal
GFF V3.2 module.ifo (BioWare, "... Generic File Format (GFF)" §3, §4) are
written here, and read back by separate code in --selftest.

  nwninstall.py LAYOUT OUTDIR N [--corpus DIR] [--textures K] [--bifs B]
                [--tex-bifs T] [--haks H] [--hak-models M] [--loose DIR]
                [--dup RESREF]... [--quiet]
  nwninstall.py --selftest

LAYOUT  ee   NWN:EE: OUTDIR/data/nwn_base.key (its BIFs named
             "data\\base_models_<i>.bif", "data\\base_textures_<i>.bif":
             relative to the install ROOT, files in OUTDIR/data/),
             OUTDIR/data/nwn_retail.key ("data\\retail_0.bif"),
             OUTDIR/lang/en/data/nwn_base_loc.key ("lang\\en\\data\\base_loc_0.bif"),
             OUTDIR/ovr/, OUTDIR/development/, and, standing for the user
             folder: OUTDIR/hak/*.hak, OUTDIR/modules/test.mod.
        169  NWN 1.69: OUTDIR/chitin.key ("data\\models_<i>.bif",
             "data\\textures_<i>.bif"), xp1.key, xp2.key, xp2patch.key,
             xp3.key (each "data\\<key>_0.bif"), BIFs in OUTDIR/data/,
             OUTDIR/override/, OUTDIR/hak/*.hak, OUTDIR/modules/test.mod,
             OUTDIR/texturepacks/xp1_tex_tpa.erf.
N       binary models in the base key (nwn_base.key / chitin.key): the
        corpus's binary models (CORPUS/nwn/binary.txt) repeated in list
        order under distinct ResRefs m<NNNNN>_<first 9 characters of the
        name> (lower case, [a-z0-9_]), spread over B model BIFs.
--corpus DIR    the corpus (default: ../shared/corpus beside the project)
--textures K    texture resources in the base key (default 1000; 0 = none):
                the corpus's .tga/.dds/.plt repeated; the first copy of each
                keeps its own name (so models find their textures), repeats
                are t<NNNNN>_<name>; spread over T texture BIFs (default 2)
--bifs B        model BIFs of the base key (default 8)
--haks H        haks, listed in module.ifo's Mod_HakList (default 2), each
                with M models h<k>_<NNNN>_<name> (default 4)
--loose DIR     also write the N base models as DIR/<resref>.mdl (same bytes)
--dup RESREF    put a model RESREF.mdl (a different corpus model each time)
                in every place of the layout (base key, later keys, both
                haks, module, override/ovr/development): the manifest says
                which copy the game picks (rank 1). Repeatable.

OUTDIR/MANIFEST.tsv: one line per resource written, tab-separated, with a
header line: resref, type (extension), container (path below OUTDIR of the
KEY, ERF or folder), bif (path below OUTDIR of the BIF, or "-"), index (in
the BIF or ERF, "-" for a loose file), sha256 of the payload, rank (1 =
the copy the game uses for that resref.type; see precedence()), size.

Exit 77 (message on stderr) when the corpus is absent.
"""
import hashlib
import os
import shutil
import struct
import sys
import tempfile
import time

MDL, TGA, DDS, PLT, TXT, IFO, TWODA = 2002, 3, 2033, 6, 10, 2014, 2017
EXT = {MDL: 'mdl', TGA: 'tga', DDS: 'dds', PLT: 'plt', TXT: 'txt', IFO: 'ifo', TWODA: '2da'}
TYPE_OF = {v: k for k, v in EXT.items()}


# ---------------------------------------------------------------- precedence
def precedence(layout, container):
    """Rank of a container in the game's resource lookup, 1 = searched first
    (wins). CONTAINER is its path below the install root, as in MANIFEST.tsv.

    NWN 1.69 (highest first): haks in Mod_HakList order (the first listed
    wins), the module (.mod), override/, texture packs (texturepacks/
    xp2_tex_tpa > xp1_tex_tpa > textures_tpa > tiles_tpa), then the keys
    xp3patch > xp3 > xp2patch > xp2 > xp1patch > xp1 > patch > chitin.
    NWN:EE: development/, haks (first listed wins), the module, ovr/ of the
    language (lang/xx/data/ovr) and of the install, then the keys
    nwn_base_loc > nwn_retail > nwn_base.

    Public sources: BioWare, "Key and BIF File Formats" §1.2 (encapsulated
    files beat directories beat key tables); nwn.wiki, "HAK" and "Content
    Load Order" (first-listed hak wins; in EE only development/ and portraits
    beat haks); NWNWiki, "Override" (1.x: core < override < module < hak);
    jd28/rollnw, nwn1 Profile::load_resources (base containers in priority
    order: texture packs, xp3patch, xp3, xp2patch, xp2, xp1patch, xp1, patch,
    chitin; EE: nwn_base_loc, nwn_retail, nwn_base); niv/neverwinter.nim,
    game.nim newDefaultResMan (ovr/ and lang/xx/data/ovr added after the
    keys, so searched first; BIF names relative to the install root).
    Note: this puts haks ABOVE override/ovr, as those sources say.
    """
    if layout == 'ee':
        order = ['development', 'hak/*', 'modules/*', 'lang/en/data/ovr', 'ovr',
                 'lang/en/data/nwn_base_loc.key', 'data/nwn_retail.key', 'data/nwn_base.key']
    else:
        order = ['hak/*', 'modules/*', 'override',
                 'texturepacks/xp2_tex_tpa.erf', 'texturepacks/xp1_tex_tpa.erf',
                 'texturepacks/textures_tpa.erf', 'texturepacks/tiles_tpa.erf',
                 'xp3patch.key', 'xp3.key', 'xp2patch.key', 'xp2.key',
                 'xp1patch.key', 'xp1.key', 'patch.key', 'chitin.key']
    r = 0
    for o in order:
        if o == 'hak/*':
            if container.startswith('hak/'):  # 'hak/<position in Mod_HakList>'
                return r + 1 + HAK_POS[container]
            r += 1000
        elif o.endswith('/*'):
            r += 1
            if container.startswith(o[:-1]):
                return r
        else:
            r += 1
            if container == o:
                return r
    raise ValueError('no precedence for %s in layout %s' % (container, layout))


HAK_POS = {}  # 'hak/name.hak' -> position in Mod_HakList (0 = first)


# ---------------------------------------------------------------- writers
def resref_ok(s):
    return 1 <= len(s) <= 16 and all(c in 'abcdefghijklmnopqrstuvwxyz0123456789_' for c in s)


def clean(name):
    return ''.join(c if c in 'abcdefghijklmnopqrstuvwxyz0123456789_' else '_' for c in name.lower())


def write_bif(path, entries, bif_index):
    """BIFF V1 at PATH: ENTRIES = [(type, payload bytes)], written streaming.
    Header 20 bytes, variable table of 16-byte {ID, Offset (absolute),
    FileSize, ResType}, then the payloads packed. Returns the file's size."""
    n = len(entries)
    off = 20 + 16 * n
    table = bytearray()
    for i, (typ, data) in enumerate(entries):
        table += struct.pack('<IIII', (bif_index << 20) | i, off, len(data), typ)
        off += len(data)
    with open(path, 'wb') as f:
        f.write(b'BIFFV1  ' + struct.pack('<III', n, 0, 20))
        f.write(table)
        for _, data in entries:
            f.write(data)
    return off


def write_key(path, bifs, keys):
    """KEY V1 at PATH. BIFS = [(name as stored, e.g. 'data\\\\x.bif', size)];
    KEYS = [(resref, type, bif index, index in that BIF)]. Header 64 bytes,
    file table 12-byte {FileSize, FilenameOffset, FilenameSize, Drives},
    filename table (each name NUL-terminated, the NUL counted in
    FilenameSize, as BioWare's chitin.key does), key table 22-byte
    {ResRef[16], ResType u16, ResID u32 = bif << 20 | index}."""
    ofile = 64
    oname = ofile + 12 * len(bifs)
    names = bytearray()
    ftab = bytearray()
    for name, size in bifs:
        raw = name.encode('latin-1') + b'\0'
        ftab += struct.pack('<IIHH', size, oname + len(names), len(raw), 1)
        names += raw
    okey = oname + len(names)
    ktab = bytearray()
    for resref, typ, b, i in keys:
        ktab += struct.pack('<16sHI', resref.encode('latin-1'), typ, (b << 20) | i)
    hdr = b'KEY V1  ' + struct.pack('<IIIIII', len(bifs), len(keys), ofile, okey, 126, 1) + bytes(32)
    with open(path, 'wb') as f:
        f.write(hdr + ftab + names + ktab)


def write_erf(path, ftype, entries):
    """ERF V1.0 at PATH (FTYPE 'HAK ', 'MOD ', 'ERF '): ENTRIES = [(resref,
    type, bytes)]. 160-byte header, no localized strings, keys {ResRef[16],
    ResID, ResType u16, 0 u16}, resource list {offset, size}, payloads."""
    n = len(entries)
    okey = 160
    ores = okey + 24 * n
    off = ores + 8 * n
    keys = bytearray()
    res = bytearray()
    for i, (resref, typ, data) in enumerate(entries):
        keys += struct.pack('<16sIHH', resref.encode('latin-1'), i, typ, 0)
        res += struct.pack('<II', off, len(data))
        off += len(data)
    hdr = ftype.encode() + b'V1.0' + struct.pack('<IIIIIIIII', 0, 0, n, okey, okey, ores, 126, 1, 0xFFFFFFFF)
    hdr += bytes(160 - len(hdr))
    with open(path, 'wb') as f:
        f.write(hdr + keys + res)
        for _, _, data in entries:
            f.write(data)


def gff_module_ifo(tag, haks):
    """A GFF V3.2 'IFO ' whose top struct has Mod_Tag (CExoString, type 10)
    and Mod_HakList (List, type 15) of structs (struct type 8) holding one
    Mod_Hak CExoString each. Header 56 bytes: FileType, Version, then
    offset/count of structs, fields, labels, field data (bytes), field
    indices (bytes), list indices (bytes). Struct {type, data, field count}:
    one field -> data = its field index; several -> byte offset in the field
    indices. Field {type, label index, data}: CExoString -> offset in field
    data (u32 length + bytes); List -> offset in list indices (u32 count +
    struct indices)."""
    labels = [b'Mod_Tag', b'Mod_HakList', b'Mod_Hak']
    fdata = bytearray()
    fields = []
    structs = []

    def exostr(s):
        o = len(fdata)
        b = s.encode('latin-1')
        fdata.extend(struct.pack('<I', len(b)) + b)
        return o
    # struct 0 = top; fields 0 (Mod_Tag), 1 (Mod_HakList); structs 1.. = haks
    fields.append((10, 0, exostr(tag)))
    fields.append((15, 1, 0))  # list indices offset 0
    structs.append((0xFFFFFFFF, 0, 2))  # field indices offset 0: [0, 1]
    for h in haks:
        fi = len(fields)
        fields.append((10, 2, exostr(h)))
        structs.append((8, fi, 1))
    findices = struct.pack('<II', 0, 1)
    lindices = struct.pack('<I', len(haks)) + b''.join(struct.pack('<I', 1 + i) for i in range(len(haks)))
    st = b''.join(struct.pack('<III', *s) for s in structs)
    fl = b''.join(struct.pack('<III', *f) for f in fields)
    lb = b''.join(l.ljust(16, b'\0') for l in labels)
    o = 56
    parts = [(st, len(structs)), (fl, len(fields)), (lb, len(labels)),
             (bytes(fdata), len(fdata)), (findices, len(findices)), (lindices, len(lindices))]
    hdr = b'IFO V3.2'
    body = b''
    for blob, count in parts:
        hdr += struct.pack('<II', o + len(body), count)
        body += blob
    assert len(hdr) == 56
    return hdr + body


# ---------------------------------------------------------------- the install
class Install:
    def __init__(self, layout, out, corpus):
        self.layout, self.out, self.corpus = layout, out, corpus
        self.manifest = []  # (resref, type, container, bif, index, sha, size)
        self._sha = {}
        self.models = [os.path.join(corpus, 'nwn', l.strip())
                       for l in open(os.path.join(corpus, 'nwn', 'binary.txt')) if l.strip()]
        tex = []
        for d, _, fs in os.walk(os.path.join(corpus, 'nwn', 'tree')):
            for f in fs:
                e = f.rsplit('.', 1)[-1].lower()
                if e in ('tga', 'dds', 'plt'):
                    tex.append(os.path.join(d, f))
        self.textures = sorted(tex)
        self._bytes = {}  # kept for the whole run, so their id()s stay theirs
        self._ids = set()

    def data(self, path):
        b = self._bytes.get(path)
        if b is None:
            b = self._bytes[path] = open(path, 'rb').read()
            self._ids.add(id(b))
        return b

    def sha(self, data):
        k = id(data)
        if k not in self._ids:  # not a cached corpus file: id() may be reused
            return hashlib.sha256(data).hexdigest()
        s = self._sha.get(k)
        if s is None:
            s = self._sha[k] = hashlib.sha256(data).hexdigest()
        return s

    def model_name(self, i):
        return os.path.basename(self.models[i % len(self.models)])[:-4]

    def add(self, resref, typ, container, bif, index, data):
        self.manifest.append((resref, EXT[typ], container, bif, index, self.sha(data), len(data)))

    def key(self, keyrel, bifsets):
        """Write KEY KEYREL (below OUT) and its BIFs: BIFSETS = [(stored BIF
        name with backslashes, [(resref, type, bytes)])]; each BIF's file is
        the stored name below OUT, '\\\\' read as '/'."""
        bifs, keys = [], []
        for b, (name, entries) in enumerate(bifsets):
            rel = name.replace('\\', '/')
            p = os.path.join(self.out, rel)
            os.makedirs(os.path.dirname(p), exist_ok=True)
            size = write_bif(p, [(t, d) for _, t, d in entries], b)
            bifs.append((name, size))
            for i, (r, t, d) in enumerate(entries):
                keys.append((r, t, b, i))
                self.add(r, t, keyrel, rel, i, d)
        p = os.path.join(self.out, keyrel)
        os.makedirs(os.path.dirname(p) or '.', exist_ok=True)
        write_key(p, bifs, keys)

    def erf(self, rel, ftype, entries):
        p = os.path.join(self.out, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        write_erf(p, ftype, entries)
        for i, (r, t, d) in enumerate(entries):
            self.add(r, t, rel, '-', i, d)

    def loose(self, folder, resref, typ, data):
        d = os.path.join(self.out, folder)
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, '%s.%s' % (resref, EXT[typ])), 'wb') as f:
            f.write(data)
        self.add(resref, typ, folder, '-', '-', data)

    def few(self, prefix, k, start):
        """K models named PREFIX<NN>_<name>, corpus models from START on."""
        out = []
        for j in range(k):
            i = start + j
            r = ('%s%02d_%s' % (prefix, j, clean(self.model_name(i))))[:16]
            out.append((r, MDL, self.data(self.models[i % len(self.models)])))
        return out


def build(layout, out, n, corpus, textures=1000, bifs=8, tex_bifs=2, haks=2, hak_models=4,
          loose=None, dups=(), quiet=False):
    ins = Install(layout, out, corpus)
    os.makedirs(out, exist_ok=True)
    nm = len(ins.models)
    # base models
    base = []
    for i in range(n):
        r = 'm%05d_%s' % (i, clean(ins.model_name(i))[:9])
        base.append((r, MDL, ins.data(ins.models[i % nm])))
    if loose:
        os.makedirs(loose, exist_ok=True)
        for r, _, d in base:
            with open(os.path.join(loose, r + '.mdl'), 'wb') as f:
                f.write(d)
    # textures
    tex, seen = [], set()
    for i in range(textures):
        p = ins.textures[i % len(ins.textures)]
        stem, e = os.path.basename(p).rsplit('.', 1)
        typ = TYPE_OF[e.lower()]
        r = stem.lower()
        if not resref_ok(r) or (r, typ) in seen:
            r = 't%05d_%s' % (i, clean(stem)[:9])
        seen.add((r, typ))
        tex.append((r, typ, ins.data(p)))
    # duplicates: copy c of RESREF gets corpus model (hash(resref) + c)
    dup_at = {}

    def dup(place):
        out_ = []
        for di, d in enumerate(dups):
            c = dup_at.get(d, 0)
            dup_at[d] = c + 1
            out_.append((d, MDL, ins.data(ins.models[(7 * di + 31 * c + 5) % nm])))
        return out_

    def split(items, k):
        k = max(1, k)
        return [items[j * len(items) // k:(j + 1) * len(items) // k] for j in range(k)]

    pre = 'data\\base_' if layout == 'ee' else 'data\\'
    bifsets = [('%smodels_%d.bif' % (pre, j), part) for j, part in enumerate(split(base, bifs))]
    if tex and tex_bifs > 0:
        bifsets += [('%stextures_%d.bif' % (pre, j), part) for j, part in enumerate(split(tex, tex_bifs))]
    bifsets[0] = (bifsets[0][0], bifsets[0][1] + dup('base'))
    hak_names = ['test_hak%d' % k for k in range(haks)]
    HAK_POS.clear()
    for k, h in enumerate(hak_names):
        HAK_POS['hak/%s.hak' % h] = k
    if layout == 'ee':
        ins.key('data/nwn_base.key', bifsets)
        ins.key('data/nwn_retail.key', [('data\\retail_0.bif', ins.few('rt', 4, 11) + dup('retail'))])
        ins.key('lang/en/data/nwn_base_loc.key',
                [('lang\\en\\data\\base_loc_0.bif', ins.few('loc', 3, 17) + dup('loc'))])
        ins.loose('ovr', 'ovr_readme', TXT, b'loose file in ovr/\n')
        for r, t, d in dup('ovr'):
            ins.loose('ovr', r, t, d)
        os.makedirs(os.path.join(out, 'development'), exist_ok=True)
        for r, t, d in dup('development'):
            ins.loose('development', r, t, d)
    else:
        ins.key('chitin.key', bifsets)
        for j, k in enumerate(('xp1', 'xp2', 'xp2patch', 'xp3')):
            ins.key(k + '.key', [('data\\%s_0.bif' % k, ins.few(k, 3, 11 + 3 * j) + dup(k))])
        os.makedirs(os.path.join(out, 'override'), exist_ok=True)
        ins.loose('override', 'ovr_readme', TXT, b'loose file in override/\n')
        for r, t, d in dup('override'):
            ins.loose('override', r, t, d)
        tp = [(r, t, d) for r, t, d in tex[:20]] or [('tp_none', TXT, b'empty\n')]
        ins.erf('texturepacks/xp1_tex_tpa.erf', 'ERF ', [('tp_' + r[:13], t, d) for r, t, d in tp])
    # haks and the module
    for k, h in enumerate(hak_names):
        ins.erf('hak/%s.hak' % h, 'HAK ', ins.few('h%d' % k, hak_models, 40 + 7 * k) + dup(h))
    ifo = gff_module_ifo('test_module', hak_names)
    ins.erf('modules/test.mod', 'MOD ', [('module', IFO, ifo)] + ins.few('mod', 2, 60) + dup('module'))
    write_manifest(ins, layout)
    return ins


def write_manifest(ins, layout):
    best = {}
    rows = []
    for r, t, c, b, i, s, z in ins.manifest:
        rank = precedence(layout, c)
        rows.append([r, t, c, b, str(i), s, rank, z])
        k = (r.lower(), t)
        best[k] = min(best.get(k, rank), rank)
    with open(os.path.join(ins.out, 'MANIFEST.tsv'), 'w') as f:
        f.write('resref\ttype\tcontainer\tbif\tindex\tsha256\trank\twins\tsize\n')
        for r, t, c, b, i, s, rank, z in rows:
            f.write('%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\t%d\n'
                    % (r, t, c, b, i, s, rank, 'yes' if best[(r.lower(), t)] == rank else 'no', z))


# ---------------------------------------------------------------- self-test
def read_key_bif(keypath, root):
    """Independent reader: -> [(resref, ext, bif rel path, index, sha256)]."""
    d = open(keypath, 'rb').read()
    assert d[:8] == b'KEY V1  '
    nb, nk, of, ok = struct.unpack_from('<IIII', d, 8)
    bifs = []
    for b in range(nb):
        size, fo, fs, _ = struct.unpack_from('<IIHH', d, of + 12 * b)
        name = d[fo:fo + fs]
        assert name.endswith(b'\0'), 'FilenameSize counts the NUL'
        rel = name[:-1].decode().replace('\\', '/')
        raw = open(os.path.join(root, rel), 'rb').read()
        assert len(raw) == size and raw[:8] == b'BIFFV1  '
        nv, nf, to = struct.unpack_from('<III', raw, 8)
        assert nf == 0 and to == 20
        tab = [struct.unpack_from('<IIII', raw, to + 16 * i) for i in range(nv)]
        bifs.append((rel, raw, tab))
    out = []
    for k in range(nk):
        rr, typ, rid = struct.unpack_from('<16sHI', d, ok + 22 * k)
        rel, raw, tab = bifs[rid >> 20]
        i = rid & 0xFFFFF
        bid, off, size, btyp = tab[i]
        assert bid & 0xFFFFF == i and btyp == typ
        out.append((rr.rstrip(b'\0').decode(), EXT[typ], rel, i,
                    hashlib.sha256(raw[off:off + size]).hexdigest()))
    return out


def read_erf(path):
    d = open(path, 'rb').read()
    assert d[4:8] == b'V1.0'
    n, _, ok, orr = struct.unpack_from('<IIII', d, 16)
    out = []
    for i in range(n):
        rr, rid, typ, _ = struct.unpack_from('<16sIHH', d, ok + 24 * i)
        off, size = struct.unpack_from('<II', d, orr + 8 * i)
        assert rid == i
        out.append((rr.rstrip(b'\0').decode(), EXT[typ], d[off:off + size]))
    return out


def read_gff(data):
    """-> dict of the top struct: labels -> str, or list of dicts."""
    assert data[:8] == b'IFO V3.2'
    h = struct.unpack_from('<12I', data, 8)
    so, fo, lo, do, io, li = h[0], h[2], h[4], h[6], h[8], h[10]

    def label(i):
        return data[lo + 16 * i:lo + 16 * i + 16].rstrip(b'\0').decode()

    def field(i):
        typ, lab, val = struct.unpack_from('<III', data, fo + 12 * i)
        if typ == 10:
            n, = struct.unpack_from('<I', data, do + val)
            return label(lab), data[do + val + 4:do + val + 4 + n].decode()
        assert typ == 15
        n, = struct.unpack_from('<I', data, li + val)
        return label(lab), [strct(struct.unpack_from('<I', data, li + val + 4 + 4 * j)[0]) for j in range(n)]

    def strct(i):
        typ, val, n = struct.unpack_from('<III', data, so + 12 * i)
        idx = [val] if n == 1 else [struct.unpack_from('<I', data, io + val + 4 * j)[0] for j in range(n)]
        return dict(field(f) for f in idx)
    return strct(0)


def selftest(corpus):
    tmp = tempfile.mkdtemp(prefix='nwninstall-')
    try:
        for layout in ('ee', '169'):
            out = os.path.join(tmp, layout)
            build(layout, out, 40, corpus, textures=30, bifs=3, tex_bifs=2, haks=2,
                  loose=os.path.join(tmp, layout + '-loose'), dups=('c_test',), quiet=True)
            rows = [l.rstrip('\n').split('\t') for l in open(os.path.join(out, 'MANIFEST.tsv'))][1:]
            want = sorted((r[0], r[1], r[2], r[3], r[4], r[5]) for r in rows)
            got = []
            for dp, _, fs in os.walk(out):
                for f in fs:
                    p = os.path.join(dp, f)
                    rel = os.path.relpath(p, out)
                    if f.endswith('.key'):
                        got += [(r, e, rel, b, str(i), s) for r, e, b, i, s in read_key_bif(p, out)]
                    elif f.endswith(('.hak', '.mod', '.erf')):
                        got += [(r, e, rel, '-', str(i), hashlib.sha256(d).hexdigest())
                                for i, (r, e, d) in enumerate(read_erf(p))]
                    elif not f.endswith(('.bif', '.tsv')):
                        r, e = f.rsplit('.', 1)
                        got.append((r, e, os.path.dirname(rel), '-', '-',
                                    hashlib.sha256(open(p, 'rb').read()).hexdigest()))
            assert sorted(got) == want, 'manifest differs from what the files hold (%s)' % layout
            ifo = [d for r, e, d in read_erf(os.path.join(out, 'modules/test.mod')) if e == 'ifo'][0]
            g = read_gff(ifo)
            assert g['Mod_Tag'] == 'test_module'
            assert [s['Mod_Hak'] for s in g['Mod_HakList']] == ['test_hak0', 'test_hak1'], g
            wins = [r for r in rows if r[0] == 'c_test' and r[7] == 'yes']
            top = 'development' if layout == 'ee' else 'hak/test_hak0.hak'
            assert len(wins) == 1 and wins[0][2] == top, wins
            copies = [r for r in rows if r[0] == 'c_test']
            assert len(set(r[5] for r in copies)) > 1
            loose = sorted(os.listdir(os.path.join(tmp, layout + '-loose')))
            assert len(loose) == 40
            base = 'data/nwn_base.key' if layout == 'ee' else 'chitin.key'
            assert sorted(r[0] + '.mdl' for r in rows if r[2] == base and r[1] == 'mdl' and r[0] != 'c_test') == loose
            print('selftest %s: %d resources, c_test wins from %s' % (layout, len(rows), wins[0][2]))
    finally:
        shutil.rmtree(tmp)
    return 0


def main(argv):
    here = os.path.dirname(os.path.abspath(__file__))
    corpus = os.environ.get('LFS_CORPUS') or os.path.join(here, '..', '..', '..', 'shared', 'corpus')
    args = list(argv)
    opts = {'textures': 1000, 'bifs': 8, 'tex-bifs': 2, 'haks': 2, 'hak-models': 4}
    pos, dups, loose, quiet, st = [], [], None, False, False
    while args:
        a = args.pop(0)
        if a == '--selftest':
            st = True
        elif a == '--quiet':
            quiet = True
        elif a == '--corpus':
            corpus = args.pop(0)
        elif a == '--loose':
            loose = args.pop(0)
        elif a == '--dup':
            d = args.pop(0)
            if not resref_ok(d):
                sys.exit('nwninstall.py: --dup %s: not a ResRef (1-16 of a-z 0-9 _)' % d)
            dups.append(d)
        elif a.startswith('--') and a[2:] in opts:
            opts[a[2:]] = int(args.pop(0))
        elif a in ('-h', '--help'):
            print(__doc__)
            return 0
        elif a.startswith('-'):
            sys.exit('nwninstall.py: unknown option %s (see --help)' % a)
        else:
            pos.append(a)
    if not os.path.isfile(os.path.join(corpus, 'nwn', 'binary.txt')):
        print('nwninstall.py: SKIP: no corpus at %s' % corpus, file=sys.stderr)
        return 77
    if st:
        return selftest(corpus)
    if len(pos) != 3 or pos[0] not in ('ee', '169'):
        print(__doc__, file=sys.stderr)
        return 2
    t0 = time.time()
    ins = build(pos[0], pos[1], int(pos[2]), corpus, textures=opts['textures'], bifs=opts['bifs'],
                tex_bifs=opts['tex-bifs'], haks=opts['haks'], hak_models=opts['hak-models'],
                loose=loose, dups=dups, quiet=quiet)
    if not quiet:
        print('nwninstall.py: %s install of %d models, %d resources in %s (%.1f s)'
              % (pos[0], int(pos[2]), len(ins.manifest), pos[1], time.time() - t0), file=sys.stderr)
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
