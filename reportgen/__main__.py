from reportgen.cli import console

if __name__ == "__main__":  # pragma: no cover
    console()
