"""The spiders: ``name`` is the module's name. Each validates its keyword arguments (``-a NAME=VALUE`` on the
command line, keywords from Python) with a pydantic model; arguments that do not validate raise
:class:`SpiderArgumentError`, one line naming the spider, each problem and the arguments it takes."""

from __future__ import annotations

from typing import Any, Iterable

from pydantic import BaseModel, ValidationError

from crawler.suggest import did_you_mean


class SpiderArgumentError(ValueError):
    """A spider's arguments do not validate (the message is one line)."""


def argument_error(spider: str, err: ValidationError, model: type[BaseModel]) -> SpiderArgumentError:
    """``err`` of validating ``spider``'s arguments against ``model`` as one line: ``greenhouse: unknown argument
    'board' (did you mean boards?); arguments: boards (required), base_url, company``."""
    names = list(model.model_fields)
    problems = []
    for error in err.errors():
        name = ".".join(str(part) for part in error["loc"][:1])
        if error["type"] == "extra_forbidden":
            problems.append((0, f"unknown argument {name!r}{did_you_mean(name, names)}"))
        elif error["type"] == "missing":
            problems.append((1, f"argument {name!r} is required"))
        else:
            problems.append((2, f"{name + ': ' if name else ''}{error['msg'].removeprefix('Value error, ')}"))
    text = "; ".join(dict.fromkeys(problem for _, problem in sorted(problems, key=lambda p: p[0])))
    return SpiderArgumentError(f"{spider}: {text}; arguments: {describe(model)}")


def describe(model: type[BaseModel]) -> str:
    """The arguments of ``model``, the required ones first: ``boards (required), company, base_url``."""
    fields = sorted(model.model_fields.items(), key=lambda item: not item[1].is_required())
    return ", ".join(name + (" (required)" if field.is_required() else "") for name, field in fields)


def check_arguments(spider: str, model: type[BaseModel], given: dict[str, Any], *,
                    skip: Iterable[str] = ()) -> BaseModel:
    """``given`` (arguments left None are not given) validated by ``model``; :class:`SpiderArgumentError` otherwise.
    ``skip``: keywords only Python callers give, validated elsewhere."""
    values = {k: v for k, v in given.items() if v is not None and k not in set(skip)}
    try:
        return model(**values)
    except ValidationError as err:
        raise argument_error(spider, err, model) from None
