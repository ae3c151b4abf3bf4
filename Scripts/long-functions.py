#!/usr/bin/env python3
"""Lists the hand-written Swift functions (func, init, deinit, subscript) of a
tree longer than a limit, from their declaration to their closing brace (by
brace matching; strings and comments set aside). Generated/ folders are
skipped. Exits 1 when there is one, so that it can guard a tree.

    python3 Scripts/long-functions.py            # Sources/, over 120 lines
    python3 Scripts/long-functions.py 80 Tests   # Tests/, over 80 lines
"""
import os, re, sys
limit = int(sys.argv[1]) if len(sys.argv) > 1 else 120
root = sys.argv[2] if len(sys.argv) > 2 else 'Sources'
decl = re.compile(r'^\s*(?:@[\w()., ]+\s+)*(?:(?:public|private|fileprivate|internal|static|class|final|override|mutating|nonmutating|nonisolated|convenience|required|@inlinable|@usableFromInline)\s+)*(func\s+[^\s(<]+|init[?!]?|deinit|subscript)\s*[(<{]?')
def strip(line):
    # drop string literals and // comments (good enough for brace counting)
    line = re.sub(r'"(?:\\.|[^"\\])*"', '""', line)
    i = line.find('//')
    return line if i < 0 else line[:i]
found = []
for dirpath, _, files in os.walk(root):
    if '/Generated' in dirpath or dirpath.endswith('Generated'): continue
    for f in files:
        if not f.endswith('.swift'): continue
        path = os.path.join(dirpath, f)
        lines = open(path, encoding='utf-8').read().split('\n')
        in_block_comment = False
        i = 0
        clean = []
        for l in lines:
            s = l
            if in_block_comment:
                j = s.find('*/')
                if j < 0: clean.append(''); continue
                s = s[j+2:]; in_block_comment = False
            j = s.find('/*')
            if j >= 0 and s.find('*/', j) < 0: s = s[:j]; in_block_comment = True
            clean.append(strip(s))
        for n, l in enumerate(clean):
            m = decl.match(l)
            if not m: continue
            # find the opening brace of the body
            depth = 0; started = False; end = None
            for k in range(n, min(len(clean), n + 4000)):
                for ch in clean[k]:
                    if ch == '{': depth += 1; started = True
                    elif ch == '}':
                        depth -= 1
                        if started and depth == 0: end = k; break
                if end is not None: break
                if not started and k > n and clean[k].strip() == '' : break
            if end is None: continue
            length = end - n + 1
            if length > limit:
                found.append((length, path, n + 1, m.group(1)))
for length, path, line, name in sorted(found, reverse=True):
    print(f'{length:5d}  {path}:{line}  {name}')
print(f'{len(found)} function(s) over {limit} lines in {root}', file=sys.stderr)
sys.exit(1 if found else 0)
