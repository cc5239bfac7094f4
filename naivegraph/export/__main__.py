"""``python -m naivegraph.export > docs/onnx_ops.md``: the ONNX map as the docs' table."""

from .onnx_map import markdown_table

if __name__ == "__main__":
    print(markdown_table(), end="")
