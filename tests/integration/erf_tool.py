#!/usr/bin/env python3
"""Independent ERF reader for the archive tests (not the project's codec).

Layout: BioWare, "BioWare Aurora Engine - Encapsulated Resource File Format":
a 160-byte header (FileType, Version, LanguageCount, LocalizedStringSize,
EntryCount, OffsetToLocalizedString, OffsetToKeyList, OffsetToResourceList,
BuildYear, BuildDay, DescriptionStrRef, reserved), the localized string list,
the key list {ResRef[16], ResID u32, ResType u16, Unused u16} and the resource
list {Offset u32, Size u32}; NWN:EE's E1.0 (neverwinter.nim) keys add a SHA-1
(44 bytes) and resource entries add compression and uncompressed size (16).

  erf_tool.py get ARCHIVE NAME         payload of resource NAME (resref.ext)
                                       to stdout (stored bytes; V1 only)
  erf_tool.py diff OLD NEW             print what differs, one line each:
                                       "entry I RESREF.TYPE: key|bytes",
                                       "added/removed", "header", "strings";
                                       exit 0 always
"""
import struct
import sys

EXT = {1: 'bmp', 3: 'tga', 4: 'wav', 6: 'plt', 7: 'ini', 10: 'txt', 2002: 'mdl',
       2009: 'nss', 2010: 'ncs', 2012: 'are', 2014: 'ifo', 2016: 'wok', 2017: '2da',
       2022: 'txi', 2023: 'git', 2025: 'uti', 2027: 'utc', 2029: 'dlg', 2030: 'itp',
       2032: 'utt', 2033: 'dds', 2035: 'uts', 2040: 'utd', 2042: 'utp', 2044: 'utm',
       2047: 'gui', 2052: 'ssf', 2056: 'jrl', 2058: 'utw', 2073: 'mtr'}


def read(path):
    d = open(path, 'rb').read()
    ver = d[4:8]
    nloc, locsize, n, oloc, okey, ores = struct.unpack_from('<IIIIII', d, 8)
    e1 = ver == b'E1.0'
    if e1:
        rl, ks, rs = 16, 44, 16
    else:
        rl = 32 if ver == b'V1.1' and n and (ores - okey) // n >= 40 else 16
        ks, rs = rl + 8, 8
    entries = []
    for i in range(n):
        k = okey + i * ks
        raw = d[k:k + rl]
        resid, typ, unused = struct.unpack_from('<IHH', d, k + rl)
        sha = d[k + rl + 8:k + rl + 28] if e1 else b''
        off, size = struct.unpack_from('<II', d, ores + i * rs)
        extra = d[ores + i * rs + 8:ores + i * rs + rs]
        entries.append({'raw': raw, 'resref': raw.split(b'\0')[0].decode('latin-1'),
                        'resid': resid, 'type': typ, 'unused': unused, 'sha': sha,
                        'extra': extra, 'body': d[off:off + size]})
    header = d[0:16] + d[32:44] + d[44:160]  # type, version, counts of strings; dates, strref, rest
    strings = d[oloc:oloc + locsize]
    return {'header': header, 'strings': strings, 'entries': entries, 'nloc': nloc}


def name_of(e):
    return '%s.%s' % (e['resref'], EXT.get(e['type'], 'type%d' % e['type']))


def main():
    if sys.argv[1] == 'get':
        a = read(sys.argv[2])
        for e in a['entries']:
            if name_of(e) == sys.argv[3]:
                sys.stdout.buffer.write(e['body'])
                return 0
        print('no such resource: %s' % sys.argv[3], file=sys.stderr)
        return 1
    if sys.argv[1] == 'diff':
        a, b = read(sys.argv[2]), read(sys.argv[3])
        if a['header'] != b['header'] or a['nloc'] != b['nloc']:
            print('header')
        if a['strings'] != b['strings']:
            print('strings')
        na, nb = len(a['entries']), len(b['entries'])
        for i in range(min(na, nb)):
            x, y = a['entries'][i], b['entries'][i]
            if (x['raw'], x['resid'], x['type'], x['unused']) != (y['raw'], y['resid'], y['type'], y['unused']):
                print('entry %d %s: key' % (i, name_of(x)))
            if (x['body'], x['sha'], x['extra']) != (y['body'], y['sha'], y['extra']):
                print('entry %d %s: bytes' % (i, name_of(x)))
        for i in range(nb, na):
            print('removed %d %s' % (i, name_of(a['entries'][i])))
        for i in range(na, nb):
            print('added %d %s' % (i, name_of(b['entries'][i])))
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == '__main__':
    sys.exit(main())
