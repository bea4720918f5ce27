#!/usr/bin/env python3
"""OpenAI endpoints of the vLLM deployments on one sim host (used by ``fleet.sh endpoints``).

Reads ``docker inspect`` output of a sim host's Compose-managed containers on stdin, prints
each endpoint, the served model names it reports and a curl line to call it. Exit 0 when at
least one endpoint was found, 1 otherwise. Standard library only (runs on the control node).
"""

import argparse
import json
import sys
import urllib.error
import urllib.request

DEFAULT_PORT = 8000  # vllm serve's default


def _argv(container):
    cfg = container.get("Config") or {}
    return list(cfg.get("Entrypoint") or []) + list(cfg.get("Cmd") or [])


def _flag(argv, name):
    for i, word in enumerate(argv):
        if word == name and i + 1 < len(argv):
            return argv[i + 1]
        if word.startswith(name + "="):
            return word.split("=", 1)[1]
    return None


def _env(container, name):
    for item in (container.get("Config") or {}).get("Env") or []:
        key, _, value = item.partition("=")
        if key == name:
            return value
    return None


def endpoints(containers, address):
    """List of dicts (container, project, url, api_key) for the vLLM servers in ``containers``.

    A container counts when its command runs ``serve`` (``vllm serve MODEL ...``). On host
    networking the server listens on the sim host's own address at ``--port`` (default 8000);
    on a bridge network, at the published host port of that container port.
    """
    found = []
    for c in containers:
        argv = _argv(c)
        if "serve" not in argv:
            continue
        labels = (c.get("Config") or {}).get("Labels") or {}
        port = int(_flag(argv, "--port") or DEFAULT_PORT)
        mode = (c.get("HostConfig") or {}).get("NetworkMode", "")
        url = None
        if mode == "host":
            url = "http://%s:%d/v1" % (address, port)
        else:
            ports = ((c.get("NetworkSettings") or {}).get("Ports") or {}).get("%d/tcp" % port) or []
            if ports:
                url = "http://%s:%s/v1" % (address, ports[0]["HostPort"])
        if url is None:
            continue
        found.append({
            "container": c.get("Name", "").lstrip("/"),
            "project": labels.get("com.docker.compose.project", ""),
            "url": url,
            "api_key": _flag(argv, "--api-key") or _env(c, "VLLM_API_KEY"),
        })
    return found


def served_models(url, api_key, timeout=3):
    req = urllib.request.Request(url + "/models")
    if api_key:
        req.add_header("Authorization", "Bearer " + api_key)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            data = json.load(resp)
        return [m.get("id", "?") for m in data.get("data", [])], None
    except (urllib.error.URLError, OSError, ValueError) as exc:
        return [], str(exc)


def curl_lines(url, model, api_key=None):
    auth = " -H 'Authorization: Bearer %s'" % api_key if api_key else ""
    return ["    curl -s %s/chat/completions -H 'Content-Type: application/json'%s \\" % (url, auth),
            "      -d '{\"model\": \"%s\", \"messages\": [{\"role\": \"user\", \"content\": \"Hello\"}]}'" % model]


def gateway_lines(host, address, port, models, err=None):
    """What ``fleet.sh gateways`` prints for one gateway: its URL first, the models it routes, a curl line."""
    url = "http://%s:%d/v1" % (address, port)
    return (["%s  %s  (the gateway: one URL for every model, routed by the request's \"model\")" % (host, url),
             "    models: %s" % (", ".join(models) if models else "not answering yet (%s)" % err)]
            + curl_lines(url, models[0] if models else "MODEL"))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--host", required=True, help="sim host (inventory) name")
    ap.add_argument("--address", required=True, help="its IP on the ascendfleet-sim network")
    ap.add_argument("--gateway-port", type=int, default=None,
                    help="the host is a gateway (group ascendfleet_gateways) listening on this port: print its URL")
    args = ap.parse_args(argv)
    if args.gateway_port:
        url = "http://%s:%d/v1" % (args.address, args.gateway_port)
        models, err = served_models(url, None)
        print("\n".join(gateway_lines(args.host, args.address, args.gateway_port, models, err)))
        return 0 if models else 1
    text = sys.stdin.read().strip()
    containers = json.loads(text) if text else []
    eps = endpoints(containers, args.address)
    for ep in eps:
        models, err = served_models(ep["url"], ep["api_key"])
        model = models[0] if models else "MODEL"
        print("%s  %s  (compose project %s, container %s)" % (args.host, ep["url"], ep["project"], ep["container"]))
        print("    models: %s" % (", ".join(models) if models else "not answering yet (%s)" % err))
        print("\n".join(curl_lines(ep["url"], model, ep["api_key"])))
    return 0 if eps else 1


if __name__ == "__main__":
    sys.exit(main())
