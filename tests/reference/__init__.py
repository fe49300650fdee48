"""Plain, slow, readable statements of the rules, independent of the kernels."""
