"""Would Zyte's html-text do our HTML → text? Its ``extract_text`` beside ``crawler.web.pages.html.html_blocks`` on every
HTML description of the recorded ATS responses (fixtures/web/ats): identical line lists, µs per description, and
the first difference. html_blocks also tells headings and list items from text (the section split needs it);
html-text gives lines only.

    pip install 'html-text>=0.6,<0.7' && python bench/html_text.py
"""
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
try:
    import html_text
except ImportError:
    raise SystemExit("html-text is not installed: pip install 'html-text>=0.6,<0.7'")
from crawler.web.pages.html import html_blocks
from normalize.text import clean_line
htmls = []
for p in sorted((Path(__file__).resolve().parents[1] / 'fixtures/web/ats').glob('*.json')):
    try:
        data = json.loads(p.read_text())
    except ValueError:
        continue
    def walk(v):
        if isinstance(v, dict):
            for k, x in v.items():
                if isinstance(x, str) and ('<' in x or '&lt;' in x) and len(x) > 200: htmls.append(x)
                else: walk(x)
        elif isinstance(v, list):
            for x in v: walk(x)
    walk(data)
import html as H  # noqa: E402
same = 0
for h in htmls:
    h2 = H.unescape(h) if '&lt;' in h and '<' not in h else h
    ours = [clean_line(b.text) for b in html_blocks(h)]
    theirs = [clean_line(l) for l in html_text.extract_text(h2).splitlines() if l.strip()]
    ours = [x for x in ours if x]
    same += ours == theirs
print(f"{len(htmls)} HTML descriptions; identical line lists: {same}")
t = time.process_time(); [html_blocks(x) for x in htmls for _ in range(20)]; a = time.process_time() - t
t = time.process_time(); [html_text.extract_text(x) for x in htmls for _ in range(20)]; b = time.process_time() - t
print(f"ours {1e6*a/len(htmls)/20:.0f} µs, html-text {1e6*b/len(htmls)/20:.0f} µs per description")
diff = next(((o, t) for o, t in (([clean_line(b.text) for b in html_blocks(x) if clean_line(b.text)], [clean_line(l) for l in html_text.extract_text(x).splitlines() if l.strip()]) for x in [H.unescape(y) if "&lt;" in y and "<" not in y else y for y in htmls]) if o != t), None)
if diff:
    import difflib
    print("\n".join(list(difflib.unified_diff(diff[0], diff[1], lineterm="", n=0))[:12]))
