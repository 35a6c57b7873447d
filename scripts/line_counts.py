"""The largest modules, classes and functions of a tree's tapa_ai/: python scripts/line_counts.py TREE."""
import ast, sys
from pathlib import Path
root = Path(sys.argv[1]) / "tapa_ai"
mods = sorted(((p.read_text().count("\n"), str(p.relative_to(root.parent))) for p in root.rglob("*.py")), reverse=True)[:8]
funcs = []
for p in root.rglob("*.py"):
    tree = ast.parse(p.read_text())
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            funcs.append((node.end_lineno - node.lineno + 1, type(node).__name__[:5], f"{p.relative_to(root.parent)}:{node.name}"))
classes = sorted([f for f in funcs if f[1] == "Class"], reverse=True)[:5]
functions = sorted([f for f in funcs if f[1] != "Class"], reverse=True)[:6]
print("modules:", "; ".join(f"{n} {m}" for n, m in mods))
print("classes:", "; ".join(f"{n} {m}" for n, _, m in classes))
print("functions:", "; ".join(f"{n} {m}" for n, _, m in functions))
