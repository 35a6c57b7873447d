"""The shipped models, named from any directory: ``net:tapa``, ``tapa-ai export tapa ...``.

The package carries one trained network per variant, ``tapa_ai/models/<variant>.pt`` (``tapa``,
``plakoto``, ``backgammon``, ``fevga``, ``narde``), each with its model card ``<variant>.md`` (how it was trained, how strong it
is, docs/strength.md), and the earlier generations each replaced,
``tapa_ai/models/generations/<variant>-g<N>.pt`` (kept so that every table measured with one can be
repeated; ``tapa_ai.net.model_id`` numbers them). They are package data: ``pip install tapa-ai`` (not only
an editable install of a checkout) has them. A checkout's ``checkpoints/`` is a link to ``tapa_ai/models/``,
so ``checkpoints/tapa.pt`` is the same file there.

Wherever a command takes a checkpoint (a bot spec ``net:...`` with any ``@Nply`` and ``,options``,
``tapa-ai export CHECKPOINT``, ``--advisor``, ``--evaluator``, ``--ranker``, the web board's models), the
text is read by :func:`resolve_model_path`, in this order:

1. a file at that path (relative to the current directory) is that file: a real path always wins;
2. a shipped name is the package's file: ``tapa``, ``plakoto``, ``backgammon``, ``fevga``, ``narde``, or a kept generation such as
   ``tapa-g3`` (:func:`shipped_names`);
3. ``checkpoints/<name>.pt`` or ``checkpoints/generations/<name>.pt``, the paths the docs use, where the
   current directory has no such file, is the package's file of that name (as a bare ``configs/<name>.toml``
   is the shipped config, :func:`tapa_ai.config.resolve_config_path`);
4. anything else raises :class:`UnknownModelError`: one line naming the shipped models (a path no file system
   opens, such as a file name of 300 characters, :class:`UnopenablePathError`: one line, the name quoted bounded).

So ``tapa-ai match net:tapa@1ply heuristic``, ``tapa-ai play --bot net:backgammon@2ply,nocube`` and
``tapa-ai export plakoto --format npz --out plakoto.npz`` work from any directory.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import TapaError
from ..quoting import PATH_LIMIT, quoted
from ..rules.options import REGISTRY, VARIANTS, same_board_game, shipped_models

MODELS_DIR = Path(__file__).resolve().parent.parent / "models"
"""The shipped models (package data): ``<variant>.pt``, ``<variant>.md``, ``generations/<variant>-g<N>.pt``."""

SHIPPED_VARIANTS = shipped_models()
"""The variants with a shipped model, each named by its variant (:data:`tapa_ai.rules.options.REGISTRY`)."""

CHECKOUT_DIR = "checkpoints"
"""The folder the docs name the shipped models by (``checkpoints/tapa.pt``; a link to :data:`MODELS_DIR` in a
checkout)."""


class UnknownModelError(TapaError, FileNotFoundError):
    """A checkpoint that is neither a file nor a shipped model; the message lists the shipped names."""


class UnopenablePathError(UnknownModelError):
    """A checkpoint path no file system opens (a file name longer than the system allows): one line, the path
    quoted bounded."""


def _is_file(path: Path) -> bool:
    """``path.is_file()``, False for a name no file system opens (too long: ``OSError``)."""
    try:
        return path.is_file()
    except OSError:
        return False


def _check_openable(text: str, path: Path) -> None:
    """:class:`UnopenablePathError` when ``path`` is no path a file system opens (its ``stat`` fails with an error
    other than "no such file")."""
    try:
        path.is_file()
    except OSError as error:
        reason = (error.strerror or type(error).__name__).lower()
        raise UnopenablePathError(f"no checkpoint file at {quoted(text)}: {reason} (a file name is at most 255 "
                                  f"bytes, a path at most {PATH_LIMIT} characters)") from None


def _generation_names() -> list[str]:
    generations = MODELS_DIR / "generations"
    return sorted(path.stem for path in generations.glob("*.pt")) if generations.is_dir() else []


def shipped_names() -> list[str]:
    """The names :func:`shipped_model` knows: the variants whose file is installed, then the kept generations."""
    return [name for name in SHIPPED_VARIANTS if (MODELS_DIR / f"{name}.pt").is_file()] + _generation_names()


def _shipped_file(name: str) -> Path | None:
    if not name or "/" in name or "\\" in name or name.startswith("."):
        return None
    for path in (MODELS_DIR / f"{name}.pt", MODELS_DIR / "generations" / f"{name}.pt"):
        if _is_file(path):
            return path
    return None


def _unknown(text: str) -> UnknownModelError:
    variants = [name for name in shipped_names() if name in SHIPPED_VARIANTS]
    generations = _generation_names()
    ranges = []
    for variant in SHIPPED_VARIANTS:
        numbers = sorted(int(name.rsplit("-g", 1)[1]) for name in generations
                         if name.startswith(f"{variant}-g") and name.rsplit("-g", 1)[1].isdigit())
        if numbers:
            ranges.append(f"{variant}-g{numbers[0]}" + (f" to -g{numbers[-1]}" if len(numbers) > 1 else ""))
    shipped = ", ".join(variants) or f"none installed (no {MODELS_DIR}: reinstall tapa-ai)"
    kept = f"; earlier generations: {', '.join(ranges)}" if ranges else ""
    shown = text if len(text) <= PATH_LIMIT else quoted(text)
    return UnknownModelError(f"no checkpoint file at {shown}: the file does not exist, nor is it a shipped model "
                             f"(shipped models: {shipped}{kept})")


def shipped_model(name: str) -> Path:
    """The package's file of a shipped model: ``shipped_model("tapa")`` -> ``.../tapa_ai/models/tapa.pt``.

    ``name``: a variant (``tapa``, ``plakoto``, ``backgammon``) or a kept generation (``tapa-g3``), without
    ``.pt`` (a missing ``tapa.pt`` is a missing file, not the shipped model). :class:`UnknownModelError` for
    any other name.
    """
    path = _shipped_file(str(name))
    if path is None:
        raise _unknown(str(name))
    return path


def shipped_model_card(variant: str) -> Path:
    """The model card of a shipped variant's model, ``tapa_ai/models/<variant>.md`` (UnknownModelError if none)."""
    path = MODELS_DIR / f"{variant}.md"
    if variant not in SHIPPED_VARIANTS or not path.is_file():
        raise UnknownModelError(f"no model card for {variant!r} (shipped: {', '.join(SHIPPED_VARIANTS)})")
    return path


def model_variant(variant: str) -> str:
    """The shipped model that plays ``variant``: its own, else that of the shipped variant of the same board game
    (``portes`` is played by the ``backgammon`` model, docs/rules.md 9: the registry's
    :attr:`~tapa_ai.rules.options.Variant.model`), else ``variant`` itself."""
    entry = REGISTRY.get(variant) if isinstance(variant, str) else None
    if entry is None:
        return variant
    if entry.model is not None:
        return entry.model
    return next((name for name in SHIPPED_VARIANTS if same_board_game(VARIANTS[name], entry.rules)), variant)


def default_net_spec(variant: str) -> str | None:
    """The variant's default network as a bot spec: ``net:checkpoints/<variant>.pt`` when the current directory
    has that file (a checkout, or your own), else the shipped model ``net:<variant>`` when installed, else None
    (``tapa-ai play``'s advisor, ``tapa-ai rollout``'s bot); ``variant``'s :func:`model_variant` (portes:
    backgammon's)."""
    variant = model_variant(variant)
    path = Path(CHECKOUT_DIR) / f"{variant}.pt"
    if path.is_file():
        return f"net:{path}"
    return f"net:{variant}" if _shipped_file(variant) is not None else None


def resolve_model_path(text: str | Path) -> Path:
    """The checkpoint file that ``text`` names: a real path first, else a shipped model (see the module).

    ``resolve_model_path("runs/x/best.pt")`` -> that file when it exists; ``resolve_model_path("tapa")`` ->
    the shipped tapa model; ``resolve_model_path("checkpoints/plakoto.pt")`` -> that file in the current
    directory, else the shipped plakoto model. Anything else: :class:`UnknownModelError` (one line).
    """
    path = Path(text)
    _check_openable(str(text), path)
    if path.is_file():
        return path
    shipped = _shipped_file(str(text))
    if shipped is None and not path.is_absolute() and path.parts[:1] == (CHECKOUT_DIR,) and path.suffix == ".pt":
        rest = path.parts[1:]
        if (len(rest) == 1 or (len(rest) == 2 and rest[0] == "generations")) and \
                not rest[-1].startswith(".") and _is_file(MODELS_DIR.joinpath(*rest)):
            shipped = MODELS_DIR.joinpath(*rest)
    if shipped is None:
        raise _unknown(str(text))
    return shipped


def find_model_path(text: str | Path) -> Path:
    """:func:`resolve_model_path`, or ``Path(text)`` unchanged when it names nothing (for callers that test
    ``is_file()`` themselves); :class:`UnopenablePathError` for a path no file system opens (the callers'
    ``is_file()`` would raise)."""
    try:
        return resolve_model_path(text)
    except UnopenablePathError:
        raise
    except UnknownModelError:
        return Path(text)
