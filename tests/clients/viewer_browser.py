"""`scratchpad ui` in a real headless Chromium driven by Selenium (Debian's chromium and
chromium-driver).

Usage: python3 viewer_browser.py PATH/TO/scratchpad DATABASE SCREENSHOT.png
DATABASE is a SQLite file path or a postgres:// URL (an empty database). The CLI creates a
session, sets its plan, writes a note holding a <script> element and offloads a 3,000-line log;
a note past the scratchpad's 2 KiB storage quota is refused (a plugin event); the viewer started
on a free port prints its URL. In the browser: the URL's token becomes a
cookie and leaves the address bar; the session list shows the session; its page shows the plan,
the note as text (the script never runs), the quota refusal among the plugin events, and the
next prompt's blocks, whose token counts
equal those `scratchpad query` prints for the same blocks; the observation's reader greps line
2096 out of the log and pages it; a `set_plan` by another process shows on the open page
within 2 s without a reload. Over plain HTTP: no token or a wrong one is 401, an unknown
session is 404, a non-loopback Host header is 403. The screenshot of the session page is
written for the docs. Kills the viewer and the browser.
"""

import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

from selenium import webdriver
from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait
from support import Checks

SESSION = "viewer-demo"
NOTE = "<script>window.pwned = 1</script> found the bug in parse()"
check = Checks()


def status(url, headers=None):
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers or {}), timeout=10) as r:
            return r.status
    except urllib.error.HTTPError as error:
        return error.code


def live(driver):
    """Waits until the open page has read its first stamp, so a later change is seen as one."""
    WebDriverWait(driver, 5, poll_frequency=0.05).until(
        lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-live") == "1")


def follow(driver, element):
    """Clicks a link and waits until its page has loaded: a click returns before the browser
    navigates when the machine is busy, and the old page would be read instead."""
    before = driver.current_url
    element.click()
    WebDriverWait(driver, 15, poll_frequency=0.05).until(
        lambda d: d.current_url != before and d.execute_script("return document.readyState") == "complete")


def main():
    binary, database, screenshot = sys.argv[1:4]
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, XDG_CACHE_HOME=os.environ.get("SCRATCHPAD_TEST_CACHE_HOME") or os.path.join(tmp, "cache"))

        # The default plugins, the scratchpad with a 2 KiB storage quota: a 3,000-char note is
        # within its notes budget but refused by the quota, a plugin event the page shows.
        config = os.path.join(tmp, "config.toml")
        with open(config, "w") as f:
            f.write('[[plugin]]\nname = "scratchpad"\n[plugin.limits]\nstorage_quota_bytes = 2048\n'
                    '[[plugin]]\nname = "observations"\n')

        def run(*args):
            return subprocess.run([binary, "--db", database, "--config", config, "--json", *args], env=env,
                                  capture_output=True, text=True)

        def cli(*args):
            out = run(*args)
            assert out.returncode == 0, (args, out.stdout, out.stderr)
            return json.loads(out.stdout)

        def call(arguments):
            return cli("call", SESSION, "session.scratchpad", json.dumps(arguments))

        cli("session", "create", SESSION)
        call({"action": "set_plan", "content": "1. reproduce the crash\n2. fix parse()"})
        call({"action": "set_notes", "content": NOTE})
        over = run("call", SESSION, "session.scratchpad", json.dumps({"action": "set_notes", "content": "n" * 3000}))
        check("a note past the storage quota is refused", over.returncode != 0 and "quota" in over.stdout, over.stdout)
        log = os.path.join(tmp, "build.log")
        with open(log, "w") as f:
            for i in range(1, 3001):
                f.write(f"ERROR E0425 cannot find value `needle` at line {i}\n" if i == 2096 else f"{i:05} compiling crate {i} of the workspace, profile dev: ok\n")
        observed = cli("observe", SESSION, "run_build", log)
        check("the 3,000-line log is offloaded", bool(observed["observation"].get("scratchpad_id")), observed)

        viewer = subprocess.Popen([binary, "--db", database, "--config", config, "ui", "--addr", "127.0.0.1:0"], stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, env=env, text=True)
        driver = None
        try:
            url = viewer.stdout.readline().strip()
            check("the viewer prints its URL with a token", url.startswith("http://127.0.0.1:") and "/?token=" in url, url)
            base, token = url.split("/?token=")
            check("no token is 401", status(base + "/") == 401)
            check("a wrong token is 401", status(base + "/?token=" + "0" * len(token)) == 401)
            check("a foreign Host header is 403", status(base + "/?token=" + token, {"Host": "evil.example"}) == 403)

            options = webdriver.ChromeOptions()
            options.binary_location = "/usr/bin/chromium"
            for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1280,1000",
                        f"--user-data-dir={tmp}/profile"):
                options.add_argument(arg)
            driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)

            driver.get(url)
            check("the token leaves the address bar", "token" not in driver.current_url, driver.current_url)
            link = driver.find_element(By.LINK_TEXT, SESSION)
            check("the session list shows the session the CLI created", link is not None)
            cookie = next(c for c in driver.get_cookies() if c["name"].startswith("scratchpad_ui_"))
            check("the cookie is HttpOnly and SameSite=Strict", cookie["httpOnly"] and cookie["sameSite"] == "Strict", cookie)
            auth = {"Cookie": f"{cookie['name']}={cookie['value']}"}
            check("an unknown session is 404", status(base + "/s/no-such-session", auth) == 404)

            follow(driver, link)
            plan = driver.find_element(By.CSS_SELECTOR, "#space-scratchpad-plan pre").text
            check("the session page shows the plan", "1. reproduce the crash" in plan and "2. fix parse()" in plan, plan)
            notes = driver.find_element(By.CSS_SELECTOR, "#space-scratchpad-notes pre").text
            check("a note holding <script> shows as text", notes == NOTE, notes)
            check("...and its script never ran", driver.execute_script("return window.pwned") is None)
            events = [r.text for r in driver.find_elements(By.CSS_SELECTOR, "#events tr")][1:]
            check("the plugin events show the quota refusal",
                  len(events) == 1 and "quota" in events[0] and "scratchpad" in events[0] and "2048 bytes" in events[0], events)

            blocks = [(b.get_attribute("data-placement"), b.get_attribute("data-plugin"),
                       int(b.find_element(By.CSS_SELECTOR, ".tokens").text))
                      for b in driver.find_elements(By.CSS_SELECTOR, ".block[data-placement]")]
            check("the next prompt's blocks are shown", len(blocks) >= 2, blocks)
            live(driver)
            queried = cli("query", SESSION, "")
            expected = [(placement, i["plugin"], i["tokens"])
                        for placement, injections in queried["injections"].items() for i in injections]
            check("their token counts equal scratchpad query's", sorted(blocks) == sorted(expected), (blocks, expected))

            # The query started a turn, which the open page is about to show (live updates are
            # checked below): open the page afresh before clicking on it.
            driver.get(base + "/s/" + SESSION)
            follow(driver, driver.find_element(By.CSS_SELECTOR, "#observations a"))
            size = driver.find_element(By.CSS_SELECTOR, "main .meta").text
            check("the reader shows the entry's size", "KiB" in size, size)
            first = driver.find_element(By.ID, "content").text
            check("the reader shows the first 64 KiB page, not the whole log",
                  first.startswith("00001 compiling") and "needle" not in first and "03000" not in first, first[-200:])
            follow(driver, driver.find_element(By.LINK_TEXT, "next →"))
            second = driver.find_element(By.ID, "content").text
            check("the next page goes on where it ended", "needle" in second and "00001" not in second, second[:200])
            box = driver.find_element(By.NAME, "grep")
            box.send_keys("needle")
            box.submit()
            WebDriverWait(driver, 5).until(lambda d: d.find_elements(By.ID, "matches"))
            rows = [r.text for r in driver.find_elements(By.CSS_SELECTOR, "#matches tr")][1:]
            check("grep finds line 2096 and only it", len(rows) == 1 and rows[0].startswith("2096") and "needle" in rows[0], rows)

            driver.get(base + "/s/" + SESSION)
            driver.execute_script("window.marker = 42")
            live(driver)
            call({"action": "set_plan", "content": "1. reproduce the crash\n2. fix parse()\n3. ship it"})
            started = time.monotonic()
            # (The element read may be swapped out between finding and reading it: try again.)
            WebDriverWait(driver, 2, poll_frequency=0.1, ignored_exceptions=(StaleElementReferenceException,)).until(
                lambda d: "3. ship it" in d.find_element(By.CSS_SELECTOR, "#space-scratchpad-plan pre").text)
            check(f"another process's set_plan shows within 2 s ({time.monotonic() - started:.2f} s)", True)
            check("...without a reload", driver.execute_script("return window.marker") == 42)

            driver.get(base + "/plugins")
            rows = {r.find_element(By.TAG_NAME, "td").text: r.find_element(By.CSS_SELECTOR, "td.events").text
                    for r in driver.find_elements(By.CSS_SELECTOR, "#plugins tr")[1:]}
            check("the plugins page lists both plugins with their events",
                  rows == {"scratchpad": "quota 1", "observations": "none"}, rows)

            driver.get(base + "/s/" + SESSION)
            driver.set_window_size(1280, 1700)
            driver.execute_script("window.scrollTo(0, 0)")
            driver.save_screenshot(screenshot)
            check("the screenshot is written", os.path.getsize(screenshot) > 10_000)
        finally:
            if driver is not None:
                driver.quit()
            viewer.kill()
            viewer.wait()
    check.done()


main()
