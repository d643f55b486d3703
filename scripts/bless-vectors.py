"""Rewrites the expected commands of the vector files from what the core sends now, keeping each
file's formatting everywhere else, and prints every change that is not the counter definition's
condition or fields (the definition, its digest) for review. Usage:
    VECTORS_BLESS=/tmp/bless.jsonl cargo test -p mongo-seq-core --test it vectors:: -- --test-threads=1
    python3 scripts/bless-vectors.py /tmp/bless.jsonl tests/vectors
then read `git diff tests/vectors` (never accept it unread)."""
import json, sys, copy

def parse(s):
    # returns node: (kind, start, end, value/children)
    i = 0
    n = len(s)
    def ws():
        nonlocal i
        while i < n and s[i] in ' \t\r\n': i += 1
    def val():
        nonlocal i
        ws()
        start = i
        c = s[i]
        if c == '{':
            i += 1; items = []
            ws()
            if s[i] == '}':
                i += 1; return ('obj', start, i, items)
            while True:
                ws(); k = strng(); ws(); assert s[i] == ':'; i += 1
                v = val(); items.append((k, v)); ws()
                if s[i] == ',': i += 1; continue
                assert s[i] == '}', (i, s[i-20:i+20]); i += 1
                return ('obj', start, i, items)
        if c == '[':
            i += 1; items = []
            ws()
            if s[i] == ']':
                i += 1; return ('arr', start, i, items)
            while True:
                v = val(); items.append(v); ws()
                if s[i] == ',': i += 1; continue
                assert s[i] == ']'; i += 1
                return ('arr', start, i, items)
        if c == '"':
            strng(); return ('lit', start, i, None)
        j = i
        while j < n and s[j] not in ',]} \t\r\n': j += 1
        i = j
        return ('lit', start, i, None)
    def strng():
        nonlocal i
        assert s[i] == '"'
        j = i + 1
        while s[j] != '"':
            j += 2 if s[j] == '\\' else 1
        k = json.loads(s[i:j+1]); i = j + 1
        return k
    return val()

def get(node, key):
    for k, v in node[3]:
        if k == key: return v
    return None

def reformat(value, start, end, s):
    original = s[start:end]
    if original == '{}':  # a new step's placeholder: written like the step around it
        line_start = s.rfind('\n', 0, start) + 1
        if s.find('\n', start) > s.find('"reply"', start):  # the step is one line
            return json.dumps(value, ensure_ascii=False, separators=(', ', ': '))
        base = len(s[line_start:start]) - len(s[line_start:start].lstrip(' '))
        return json.dumps(value, ensure_ascii=False, indent=2).replace('\n', '\n' + ' ' * base)
    if '\n' not in original:
        sep = (', ', ': ') if (', ' in original or ': ' in original) else (',', ':')
        return json.dumps(value, ensure_ascii=False, separators=sep)
    line_start = s.rfind('\n', 0, start) + 1
    base = len(s[line_start:start]) - len(s[line_start:start].lstrip(' '))
    # detect indent unit: next line indentation minus base
    nl = original.index('\n') + 1
    rest = original[nl:]
    unit = len(rest) - len(rest.lstrip(' ')) - base
    if unit <= 0: unit = 2
    text = json.dumps(value, ensure_ascii=False, indent=unit)
    return text.replace('\n', '\n' + ' ' * base)

def strip_def(v):
    """The command without what the definition adds."""
    v = copy.deepcopy(v)
    def walk(x):
        if isinstance(x, dict):
            orv = x.get('$or')
            if isinstance(orv, list) and len(orv) == 2 and orv[0] == {'definition': {'$exists': False}}:
                del x['$or']
            andv = x.get('$and')
            if isinstance(andv, list) and len(andv) == 1 and isinstance(andv[0], dict) and set(andv[0]) == {'$or'}:
                o = andv[0]['$or']
                if isinstance(o, list) and o and o[0] == {'definition': {'$exists': False}}:
                    del x['$and']
            if 'definition' in x and isinstance(x['definition'], dict) and 'start' in x['definition']:
                del x['definition']
            x.pop('definitionDigest', None)
            for k in list(x):
                walk(x[k])
            for operator in ('$set', '$setOnInsert'):
                if operator in x and x[operator] == {}:
                    del x[operator]
        elif isinstance(x, list):
            for y in x: walk(y)
    walk(v)
    # projection with definition
    return v

def main(bless, root):
    by_file = {}
    for line in open(bless):
        d = json.loads(line)
        by_file.setdefault(d['file'], {})[d['name']] = d
    for file, cases in by_file.items():
        path = f'{root}/{file}'
        s = open(path).read()
        tree = parse(s)
        case_nodes = get(tree, 'cases')[3]
        edits = []
        for cn in case_nodes:
            name = json.loads(s[get(cn, 'name')[1]:get(cn, 'name')[2]])
            if name not in cases: continue
            steps = get(cn, 'steps')
            entry = cases.pop(name)
            for c in entry.get('calls', []):
                call = get(cn, 'calls')[3][c['index']]
                out = get(call, 'output')
                old = json.loads(s[out[1]:out[2]])
                if strip_def(old) != strip_def(c['output']):
                    print(f'REVIEW {file} :: {name} call {c["index"]}\n  old: {json.dumps(strip_def(old))}\n  new: {json.dumps(strip_def(c["output"]))}')
                edits.append((out[1], out[2], reformat(c['output'], out[1], out[2], s)))
            for c in entry['commands']:
                step = steps[3][c['index']]
                cmd = get(step, 'command')
                old = json.loads(s[cmd[1]:cmd[2]])
                new = c['command']
                if strip_def(old) != strip_def(new):
                    print(f'REVIEW {file} :: {name} step {c["index"]}\n  old: {json.dumps(strip_def(old))}\n  new: {json.dumps(strip_def(new))}')
                edits.append((cmd[1], cmd[2], reformat(new, cmd[1], cmd[2], s)))
        for start, end, text in sorted(edits, reverse=True):
            s = s[:start] + text + s[end:]
        json.loads(s)
        open(path, 'w').write(s)
        print(file, len(edits), 'commands rewritten', 'unmatched:', list(cases))

main(sys.argv[1], sys.argv[2])
