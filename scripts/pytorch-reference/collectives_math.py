"""Bytes one rank sends in one collective call: ring algorithms, the usual bus-bandwidth
accounting, with N the input buffer's element count (after PyTorch's padding), n the group size
and 8 bytes per float64 element:
  all_gather_into_tensor   (n-1) * N            each rank's (padded) block reaches n-1 peers
  reduce_scatter_tensor    (n-1) * N / n        N is the padded full buffer; n-1 blocks leave
  all_reduce               2 * (n-1) * N / n    a reduce-scatter then an all-gather
  all_to_all_single        (n-1) * N / n        every block but one's own
"""

BYTES_PER_ELEMENT = 8  # float64


def bytes_sent(call):
    """Bytes one rank sends in one recorded call (module docstring); exact for n in 2, 4, 8."""
    n, elements = call["group_size"], call["input_elements"]
    numerator = {
        "all_gather_into_tensor": (n - 1) * elements * n,
        "reduce_scatter_tensor": (n - 1) * elements,
        "all_reduce": 2 * (n - 1) * elements,
        "all_to_all_single": (n - 1) * elements,
    }[call["op"]] * BYTES_PER_ELEMENT
    if numerator % n:
        raise ValueError(f"bytes sent by {call} are not a whole number")
    return numerator // n
