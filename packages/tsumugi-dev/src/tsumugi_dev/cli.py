def main() -> None:
    raise SystemExit("tsumugi: not implemented yet")
