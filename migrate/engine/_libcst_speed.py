"""Two libcst costs paid once per class instead of once per visitor.

Every matcher-decoratable visitor (AddImportsVisitor, RemoveImportsVisitor and the
gatherers they build) scans ``dir(self)`` three times when it is constructed, looking
for methods carrying ``@m.visit``/``@m.leave``/``@m.call_if_inside`` matchers. libcst's
own import helpers carry none, and the scan is the same for every instance of a class,
yet it costs 3–4 ms per visitor: on a small file that is most of a conversion.

For classes of libcst and of this package whose scan found nothing, the answer is
remembered (a fresh empty dict each time: libcst fills these dicts as it visits).
Classes with decorated methods, and any class from elsewhere, are scanned as before.
The metadata providers that share one walk (scope, expression context, qualified
names) are batchable visitors; each walk asks every one of them for its ``visit_*`` and
``leave_*`` methods with ``inspect.getmembers`` (another ``dir()`` scan). The method
names of a class do not change, so they are found once per class and bound per instance.

If a libcst release renames what is patched here, nothing is patched and nothing changes.
"""

from __future__ import annotations

from libcst import _batched_visitor
from libcst.matchers import _visitors

_GATHERERS = ("_gather_matchers", "_gather_constructed_visit_funcs", "_gather_constructed_leave_funcs")
_OURS = ("libcst.", "migrate.")


def _remembering(original):
    found_nothing: set[type] = set()

    def gather(obj):
        cls = type(obj)
        if cls in found_nothing:
            return {}
        result = original(obj)
        if not result and cls.__module__.startswith(_OURS):
            found_nothing.add(cls)
        return result

    gather.__wrapped__ = original
    gather.__doc__ = original.__doc__
    gather.migrate_remembers = True
    return gather


def _visitor_names(original):
    names: dict[type, tuple[str, ...]] = {}

    def get_visitors(self):
        cls = type(self)
        known = names.get(cls)
        if known is None:
            found = original(self)
            if not cls.__module__.startswith(_OURS):
                return found
            names[cls] = tuple(found)
            return found
        return {name: getattr(self, name) for name in known}

    get_visitors.__wrapped__ = original
    get_visitors.__doc__ = original.__doc__
    get_visitors.migrate_remembers = True
    return get_visitors


def install() -> None:
    for name in _GATHERERS:
        original = getattr(_visitors, name, None)
        if callable(original) and not getattr(original, "migrate_remembers", False):
            setattr(_visitors, name, _remembering(original))
    batchable = getattr(_batched_visitor, "BatchableCSTVisitor", None)
    original = getattr(batchable, "get_visitors", None)
    if callable(original) and not getattr(original, "migrate_remembers", False):
        batchable.get_visitors = _visitor_names(original)
