"""Stand-in for the get-pip.py bootstrap script that ansible-test downloads.

ansible-test --venv bootstraps pip into each sanity virtualenv with a get-pip.py script it
fetches from ci-files.testing.ansible.com, which these machines cannot reach. This does the
same job from what Python itself ships: ensurepip puts a pip into the virtualenv, and that pip
installs the exact versions ansible-test asked for (pip==X and friends) from the package index.
scripts/sanity.sh copies it to the cache path ansible-test looks in.
"""
import subprocess
import sys

# get-pip.py takes these flags; plain pip does not know them (nothing to do for them here).
BOOTSTRAP_ONLY = {"--no-setuptools", "--no-wheel"}

subprocess.check_call([sys.executable, "-m", "ensurepip", "--default-pip"], stdout=subprocess.DEVNULL)
args = [a for a in sys.argv[1:] if a not in BOOTSTRAP_ONLY]
subprocess.check_call([sys.executable, "-m", "pip", "install", "--disable-pip-version-check", *args])
