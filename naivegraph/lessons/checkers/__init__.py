"""The exercise checkers, one module per lesson (each registers its checkers in
:data:`naivegraph.lessons.checking.CHECKERS`)."""

from .lesson01 import check_forward_values, check_l1_grad, check_leaf_grads
from .lesson02 import check_find_leaves, check_leaf_flags, check_next_functions
from .lesson03 import (
    check_accumulated_grad,
    check_double_hook,
    check_manual_gradient,
    check_second_derivative,
    check_vector_backward,
)
from .lesson04 import check_inplace_predictions, check_reset_leaf, check_versions
from .lesson05 import check_finetune_setup, check_inference, check_requires_grad_flow
from .lesson06 import check_compiled_step, check_memory_plan, check_static_model
from .lesson07 import check_trace_pitfall, check_where_fix
from .lesson08 import (
    check_derivative_table,
    check_free_graph,
    check_gradient_descent,
    check_jacobian,
    check_run_backward,
    check_static_backward,
    engine_table,
    yours_or_labs,
)
from .lesson09 import check_accuracy_fn, check_static_classifier, check_train_step
from .lesson10 import (
    check_poly_loop,
    check_run_semantics,
    check_trace_trap,
    check_update_nodes,
)
from .lesson11 import (
    check_dual_rules,
    check_jacobian_forward,
    check_jacobian_reverse,
    check_mode_choice,
)
from .lesson12 import (
    check_cube_function,
    check_first_nan,
    check_linear_function,
    check_matmul_backward,
    check_softplus_partial,
    check_sum_to_shape,
)
from .lesson13 import check_baked_branch, check_freed_first, check_nodes_removed

__all__ = [
    "check_forward_values",
    "check_l1_grad",
    "check_leaf_grads",
    "check_find_leaves",
    "check_leaf_flags",
    "check_next_functions",
    "check_accumulated_grad",
    "check_double_hook",
    "check_manual_gradient",
    "check_second_derivative",
    "check_vector_backward",
    "check_inplace_predictions",
    "check_reset_leaf",
    "check_versions",
    "check_finetune_setup",
    "check_inference",
    "check_requires_grad_flow",
    "check_compiled_step",
    "check_memory_plan",
    "check_static_model",
    "check_trace_pitfall",
    "check_where_fix",
    "check_derivative_table",
    "check_jacobian",
    "check_static_backward",
    "check_run_backward",
    "check_free_graph",
    "check_gradient_descent",
    "check_accuracy_fn",
    "check_train_step",
    "check_static_classifier",
    "check_poly_loop",
    "check_run_semantics",
    "check_trace_trap",
    "check_update_nodes",
    "check_dual_rules",
    "check_jacobian_forward",
    "check_jacobian_reverse",
    "check_mode_choice",
    "check_cube_function",
    "check_first_nan",
    "check_matmul_backward",
    "check_sum_to_shape",
    "check_linear_function",
    "check_softplus_partial",
    "check_freed_first",
    "check_nodes_removed",
    "check_baked_branch",
    "engine_table",
    "yours_or_labs",
]
