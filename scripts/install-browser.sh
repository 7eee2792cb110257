#!/usr/bin/env bash
# Install Debian's headless-capable Chromium and its WebDriver for the browser tests.
# Idempotent: does nothing when both are already installed. Needs root (or sudo) and apt.
set -euo pipefail
if command -v chromium >/dev/null 2>&1 && command -v chromedriver >/dev/null 2>&1; then
    echo "chromium and chromedriver already installed"
    exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends chromium chromium-driver
chromium --version
