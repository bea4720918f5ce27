"""Run INSIDE the throwaway virtualenv of scripts/releases/record-argparse.py, by that venv's python: build
`vllm serve`'s argument parser as vLLM's own CLI (vllm.entrypoints.cli.main) builds it, and write every option
string it accepts to the JSON file named by argv[1].

Standard library and the installed vLLM only: it never imports the collection. vLLM logs to stdout, so the
result goes to a file, not stdout.
"""
import argparse
import json
import sys


def flexible_parser_class():
    try:  # vLLM >= 0.11
        from vllm.utils.argparse_utils import FlexibleArgumentParser
    except ImportError:
        from vllm.utils import FlexibleArgumentParser
    return FlexibleArgumentParser


def serve_parser():
    """The parser `vllm serve` parses its command line with: vllm.entrypoints.cli.main.main() makes a root
    FlexibleArgumentParser, adds subparsers, and lets each command module's cmd_init() commands add theirs;
    the serve command's subparser_init() returns make_arg_parser(<the serve subparser>)."""
    root = flexible_parser_class()(description="vLLM CLI")
    subparsers = root.add_subparsers(required=False, dest="subparser")
    try:
        from vllm.entrypoints.cli import serve
    except ModuleNotFoundError:
        raise  # the recorder installs it
    except Exception as error:  # pylint: disable=broad-except
        # vLLM 0.17.0: vllm/entrypoints/cli/__init__.py imports the benchmarks, whose kernels need the torch the
        # wheel pins (torch 2.13's CPU build lacks torch._C._cpu._is_avx512_supported). Its
        # ServeSubcommand.subparser_init is subparsers.add_parser("serve", ...) then make_arg_parser(that parser).
        from vllm.entrypoints.openai.cli_args import make_arg_parser
        built = "make_arg_parser(FlexibleArgumentParser().add_subparsers().add_parser('serve')), as " \
                "ServeSubcommand.subparser_init does (vllm.entrypoints.cli does not import: %s: %s)" % (type(error).__name__, error)
        return make_arg_parser(subparsers.add_parser("serve")), built
    found = [cmd.subparser_init(subparsers) for cmd in serve.cmd_init() if cmd.name == "serve"]
    if len(found) != 1:
        raise SystemExit("vllm.entrypoints.cli.serve.cmd_init() has %d 'serve' commands" % len(found))
    return found[0], "vllm.entrypoints.cli.serve.cmd_init() -> ServeSubcommand.subparser_init(FlexibleArgumentParser().add_subparsers())"


def platform_facts():
    """The platform the parser was built on and whether it adds to the parser: vLLM calls
    current_platform.pre_register_and_update(parser) from AsyncEngineArgs.add_cli_args; the base Platform's
    is a no-op, so a platform that does not override it adds nothing (vllm-ascend's NPU platform does: its
    additions are read from vllm-ascend's source by scripts/gen-vllm-cli-data.py)."""
    from vllm.platforms import current_platform
    from vllm.platforms.interface import Platform

    cls = type(current_platform)
    own = getattr(cls.pre_register_and_update, "__func__", cls.pre_register_and_update)
    base = getattr(Platform.pre_register_and_update, "__func__", Platform.pre_register_and_update)
    return "%s.%s" % (cls.__module__, cls.__qualname__), own is base


def main(out):
    parser, built = serve_parser()
    platform, adds_nothing = platform_facts()
    options, help_options = {}, []
    for action in parser._actions:  # pylint: disable=protected-access
        if isinstance(action, argparse._HelpAction):  # pylint: disable=protected-access
            help_options.extend(action.option_strings)
            continue
        for option in action.option_strings:
            # nargs == 0: store_true/false/const, count, BooleanOptionalAction (both its --x and --no-x)
            options[option] = "switch" if action.nargs == 0 else "value"
    import vllm

    with open(out, "w") as handle:
        json.dump({"vllm_version": vllm.__version__, "parser_built_by": built,
                   "platform": platform, "platform_adds_to_parser": not adds_nothing,
                   "options": dict(sorted(options.items())), "help_options": sorted(help_options)}, handle)


if __name__ == "__main__":
    main(sys.argv[1])
