"""nbgrader source notebooks, made from the exercise files and their solutions.

One notebook per exercise file ``exercises/exN_*.py``, so the notebooks never drift
from the files a learner edits at a terminal:

    markdown   the exercise's docstring
    code       setup (locked): ``from exercises.grading import check, setup``
    code       the exercise file, each task's ``raise NotImplementedError(...)`` replaced by
               its solution between ``### BEGIN SOLUTION`` / ``### END SOLUTION``
    per task   a markdown title with the points, then a graded test cell:
                   check("1.1", globals(), part="visible")
                   ### BEGIN HIDDEN TESTS
                   check("1.1", globals(), part="hidden")
                   ### END HIDDEN TESTS

``nbgrader generate_assignment`` turns each region into a stub and drops the hidden
tests; ``nbgrader autograde`` puts them back and grades the cell: its points, or 0.
"""

from __future__ import annotations

import ast
import re
import textwrap
from pathlib import Path

import nbformat

from exercises._tasks import HERE, STUB_LINE, exercise_files, stubs
from exercises.course import points, title

SCHEMA = 3  # nbgrader's cell metadata schema


def _meta(grade_id: str, *, solution=False, grade=False, locked=False, task_points=None) -> dict:
    meta = {"grade_id": grade_id, "solution": solution, "grade": grade, "locked": locked,
            "schema_version": SCHEMA}
    if grade:
        meta["points"] = task_points
    return {"nbgrader": meta}


def _body(func: ast.FunctionDef, lines: list[str]) -> list[str]:
    """A function's body without its docstring, its lines as they are (a multi-line string
    in it must keep its text: the stub's body has the same indentation)."""
    body = func.body
    if body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant) \
            and isinstance(body[0].value.value, str):
        body = body[1:]
    return lines[body[0].lineno - 1:body[-1].end_lineno]


def _top_level(tree: ast.Module) -> dict[str, ast.stmt]:
    names = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names[node.name] = node
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    names[target.id] = node
    return names


def solution_code(exercise: Path, solution: Path) -> str:
    """The exercise file without its docstring, each stub replaced by its solution region
    (with the imports and helpers of the solution module that it uses, defined inside it:
    a region at the top level would become a stub that raises when the cell runs)."""
    text, solved = exercise.read_text(), solution.read_text()
    tree, lines = ast.parse(text), text.splitlines()
    solved_tree, solved_lines = ast.parse(solved), solved.splitlines()
    theirs = _top_level(solved_tree)
    mine = set(_top_level(tree)) | _imported(tree)
    extra = {name: node for node in solved_tree.body for name in _names(node) if name not in mine}
    out = list(lines)
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef):
            continue
        for i in range(node.lineno - 1, node.end_lineno):
            if STUB_LINE.search(lines[i]):
                indent = lines[i][:len(lines[i]) - len(lines[i].lstrip())]
                answer = theirs.get(node.name)
                if not isinstance(answer, ast.FunctionDef):
                    raise ValueError(f"{solution.name} has no function {node.name}")
                body = _body(answer, solved_lines)
                if not body[0].startswith(indent) or body[0][len(indent)] == " ":
                    raise ValueError(f"{solution.name}: {node.name}'s body is not indented as the stub's")
                helpers = "\n".join(ast.get_source_segment(solved, n) for n in _needed(answer, extra))
                region = [indent + "### BEGIN SOLUTION", *textwrap.indent(helpers, indent).splitlines(),
                          *body, indent + "### END SOLUTION"]
                out[i] = "\n".join(region)
    start = tree.body[1].lineno - 1 if _docstring(tree.body[0]) else 0
    return "\n".join(out[start:]).strip() + "\n"


def _used(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _needed(func: ast.FunctionDef, extra: dict[str, ast.stmt]) -> list[ast.stmt]:
    """The statements of ``extra`` that ``func`` uses, and those they use, in source order."""
    found: dict[int, ast.stmt] = {}
    todo = [func]
    while todo:
        for name in _used(todo.pop()):
            node = extra.get(name)
            if node is not None and id(node) not in found:
                found[id(node)] = node
                todo.append(node)
    return sorted(found.values(), key=lambda n: n.lineno)


def _imported(tree: ast.Module) -> set[str]:
    return {name for node in tree.body for name in _names(node)
            if isinstance(node, (ast.Import, ast.ImportFrom))}


def _docstring(node: ast.stmt) -> bool:
    return isinstance(node, ast.Expr) and isinstance(getattr(node, "value", None), ast.Constant)


def _future(node: ast.stmt) -> bool:
    return isinstance(node, ast.ImportFrom) and node.module == "__future__"


def _names(node: ast.stmt) -> list[str]:
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return [(a.asname or a.name).split(".")[0] for a in node.names]
    if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
        return [node.name]
    if isinstance(node, ast.Assign):
        return [t.id for t in node.targets if isinstance(t, ast.Name)]
    return []


def notebook(exercise: Path) -> nbformat.NotebookNode:
    """The nbgrader source notebook of one exercise file."""
    name = exercise.stem
    doc = ast.get_docstring(ast.parse(exercise.read_text())) or name
    head, _, rest = doc.partition("\n")
    rest = re.sub(r"Check your work:.*", "", rest).strip()
    cells = [
        nbformat.v4.new_markdown_cell(f"# {head}\n\n```text\n{rest}\n```\n\nWrite your code in the "
                                      "cell below where it says `YOUR CODE HERE`, run it, then run "
                                      "each task's check cell."),
        nbformat.v4.new_code_cell("from exercises.grading import check, setup\n\nsetup()  # numba's CUDA "
                                  "simulator where there is no GPU, before numba is imported",
                                  metadata=_meta(f"{name}-setup", locked=True)),
        nbformat.v4.new_code_cell(solution_code(exercise, HERE / "solutions" / exercise.name),
                                  metadata=_meta(f"{name}-code", solution=True)),
    ]
    for task in dict.fromkeys(stubs(exercise)):
        marker = task.replace(".", "_")
        plural = "s" if points(task) != 1 else ""
        cells.append(nbformat.v4.new_markdown_cell(f"### Task {task}: {title(task)} ({points(task)} point{plural})"))
        cells.append(nbformat.v4.new_code_cell(
            f'check("{task}", globals(), part="visible")\n### BEGIN HIDDEN TESTS\n'
            f'check("{task}", globals(), part="hidden")\n### END HIDDEN TESTS',
            metadata=_meta(f"task{marker}", grade=True, locked=True, task_points=points(task))))
    nb = nbformat.v4.new_notebook(cells=cells)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    return nb


def write_sources(course: Path) -> list[str]:
    """``course/source/<exercise>/<exercise>.ipynb`` for every exercise file; their names."""
    names = []
    for exercise in exercise_files():
        folder = course / "source" / exercise.stem
        folder.mkdir(parents=True, exist_ok=True)
        nbformat.write(notebook(exercise), folder / f"{exercise.stem}.ipynb")
        names.append(exercise.stem)
    return names
