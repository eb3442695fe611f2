"""The lowering: IR + decided names → the typed context of every generated module.

This is the one place that decides what the templates see (`context.py` has the types); the
templates only loop over it and look things up. `lower` makes the contexts of a package:

- models: `models.py`'s classes, enums and aliases (`models.py` here; `unions.py` for unions,
  `shapes.py` for how a shape is annotated, checked and encoded).
- methods and rpc: each method with its handler name (from `naming`) and its payload types.
- REFERENCE.md: the unions (outer first), methods and enums a user looks up.
- session_state: which `SessionUpdate` kinds follow which rule of the protocol (`session.py`).
"""

from __future__ import annotations

from collections.abc import Sequence

from ..ir import Method, Model
from ..modules import ModuleSpec
from ..naming import Names
from .context import (
    MethodContext,
    MethodsContext,
    ModelsContext,
    ModuleContext,
    ReferenceContext,
    RpcContext,
    UnionContext,
)
from .models import ModelsLowering


def lower_models(model: Model, names: Names, banner: str) -> ModelsContext:
    """`models.py`'s context, which the pipeline makes first (ruff formats it the longest)."""
    return ModelsLowering(model, names).context(banner)


def lower(
    model: Model,
    names: Names,
    modules: Sequence[ModuleSpec],
    *,
    banner: str,
    ref: str,
    sha256: str,
    models: ModelsContext | None = None,
) -> dict[str, ModuleContext]:
    """The context of each templated module of `modules`, by module name (`models`: the one
    `lower_models` made already)."""
    from .reference import object_rows  # imported here, once ruff formats models.py
    from .session import SESSION_RULES, SESSION_RULES_V1, SESSION_TEMPLATE_V1, session_state

    if models is None:
        models = lower_models(model, names, banner)
    requests = {m.name for m in model.methods if m.kind == "request"}
    methods = tuple(
        _method(m, names, twin=m.kind == "notification" and m.name in requests)
        for m in model.methods
    )
    made: dict[str, ModuleContext] = {
        "models": models,
        "methods": MethodsContext(banner, methods),
        "rpc": _rpc(banner, model.methods, methods, bool(model.batches)),
        "REFERENCE": ReferenceContext(
            banner,
            model.title,
            _outer_first(models.unions),
            methods,
            models.enums,
            object_rows(model, names),
        ),
    }
    wanted = {m.module for m in modules if m.template is not None}
    if "session_state" in wanted:
        template = next(m.template for m in modules if m.module == "session_state")
        rules = SESSION_RULES_V1 if template == SESSION_TEMPLATE_V1 else SESSION_RULES
        made["session_state"] = session_state(model, names, banner, rules)
    for name in wanted - made.keys():  # a template that needs the banner only (the toolkit)
        made[name] = ModuleContext(banner)
    return {name: made[name] for name in wanted}


def _method(method: Method, names: Names, *, twin: bool) -> MethodContext:
    """`twin`: a notification whose wire name is also a request's."""
    params = names.types.get(method.params or "", "")
    result = names.types.get(method.result or "", "")
    request = method.kind == "request"
    arrow = f"`{params or 'JSON'}` → `{result or 'JSON'}`"
    if not request:
        arrow = f"`{params or 'JSON'}`, never answered"
    lane = " Unstable: only in the unstable schema." if method.unstable else ""
    result_annotation = "None"
    if request:
        result_annotation = f"_m.{result}" if result else "Any"
    return MethodContext(
        name=method.name,
        py=names.methods.get((method.name, method.kind), ""),
        side=method.side,
        kind=method.kind,
        unstable=method.unstable,
        doc=f"`{method.name}` ({method.kind}): {arrow}.{lane}",
        params_class=params,
        result_class=result,
        params_type=f"_m.{params}" if params else "None",
        result_type=f"_m.{result}" if result else "None",
        params_annotation=f"_m.{params}" if params else "Any",
        result_annotation=result_annotation,
        twin=twin,
    )


def _rpc(
    banner: str, methods: tuple[Method, ...], contexts: tuple[MethodContext, ...], batches: bool
) -> RpcContext:
    roles: dict[str, list[MethodContext]] = {"agent": [], "client": []}
    cancel: str | None = None
    for method, context in zip(methods, contexts, strict=True):
        if not method.roles and method.side == "protocol":
            cancel = method.name  # the runtime cancels in-flight handlers itself
        for role in method.roles:
            roles[role].append(context)
    every = roles["agent"] + roles["client"]
    return RpcContext(
        banner,
        agent=tuple(roles["agent"]),
        client=tuple(roles["client"]),
        cancel_method=cancel,
        batches=batches,
        needs_any=any("Any" in (m.params_annotation, m.result_annotation) for m in every),
        needs_models=any(m.params_class or m.result_class for m in every),
        has_requests=any(m.kind == "request" for m in every),
    )


def _outer_first(unions: tuple[UnionContext, ...]) -> tuple[UnionContext, ...]:
    """The unions as a reader wants them: each `$defs` union, then those nested in it (models.py
    has them the other way round: an alias after the aliases it names)."""
    out: list[UnionContext] = []
    group: list[UnionContext] = []
    for u in unions:
        group.append(u)
        if not u.outer_tags:  # a `$defs` union ends the group of those nested in it
            out.extend(reversed(group))
            group = []
    return tuple(out + group)


def isort_key(name: str) -> tuple[int, str, str]:
    """Ruff's import order within one `from` statement: CONSTANTS, Classes, then the rest."""
    kind = 0 if name.isupper() and len(name) > 1 else 1 if name[:1].isupper() else 2
    return (kind, name.lower(), name)
