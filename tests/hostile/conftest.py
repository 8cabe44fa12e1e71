"""Print how many fuzz cases ran, per target, at the end of the session (xdist included)."""


def pytest_terminal_summary(terminalreporter):
    lines = []
    for status in ("passed", "failed"):
        for report in terminalreporter.stats.get(status, []):
            lines += [value for name, value in getattr(report, "user_properties", ())
                      if name == "fuzz_summary"]
    if lines:
        terminalreporter.write_sep("-", "hostile-model fuzzing")
        for line in lines:
            terminalreporter.write_line(line)
