"""Chromium's fake camera fed from a Y4M file (tests/browser/fakecam.py), as the IDPass browser tests will use it:
`--use-fake-device-for-media-stream --use-fake-ui-for-media-stream --use-file-for-fake-video-capture=clip.y4m`
on Debian's Chromium (156, headless, --disable-gpu), the page served from http://127.0.0.1 (a secure context, so
getUserMedia is allowed), frames read with `video.requestVideoFrameCallback` into a canvas.

What we measured (each clip frame carries its index as a 10-bit bar code, and a colour per second):

(a) A NEW getUserMedia session, after every track of the previous one was stopped, starts the file again from
    its beginning: the capture device is closed with its last track and reopened at frame 0. The page does not
    see frame 0 itself, though: the first frame a MediaStreamTrackProcessor reads is 0 or 1, the first one
    `requestVideoFrameCallback` reports on a <video> is 1 or 2 (the ~100-200 ms while the element starts
    playing), so a clip's first 0.2-0.3 s is not seen. The file's frames therefore need a lead-in.
    Whereas while ANY track is live (same page, another page, even another browser context of the same browser)
    the device is shared: a second getUserMedia continues where the clip is. And the file loops at its end,
    delivering frame 0 twice in a row (two pixel-identical frames, 100 ms apart): a clip must be long enough
    (a long tail) for the flow never to reach its end, or a replay/identical-frames check would see the repeat.
(b) The frame rate is the Y4M header's: F10:1 gives 10.0 frames per second (100 ms apart; 30:1 gives 29.9),
    whatever frameRate the page asks (a higher one is not granted: settings say 10). A lower one is granted by
    dropping frames (frameRate 5 -> every other frame); width/height above the file's give the file's size
    (640x480), below it a crop-and-scale. getUserMedia resolves in ~140 ms the first time (~15 ms after), the
    first frame reaches the page ~100 ms later; launching Chromium takes ~0.4 s.
(c) `requestVideoFrameCallback` fires once per delivered frame, each a distinct frame: at 10 fps no frame was
    reported twice and none was skipped; at 30 fps about one frame in 150 was skipped (never a duplicate), and
    the callback's `captureTime`s are ~100 ms apart at 10 fps. Frames carry no noise of their own: identical
    Y4M frames give identical pixels, which is why the clip makers add fresh noise to every frame.

The test asserts what is stable: the clip's content arrives in order and unaltered (index and colour agree),
no duplicates through rVFC, a rate near 10 fps, the restart after all tracks stop, the shared device while one
is live. Skips, latencies and the exact first frame seen depend on the machine's load and are not asserted."""
from __future__ import annotations

import hashlib
import http.server
import threading

import numpy as np
import pytest

from tests.browser.conftest import CHROMIUM, CHROMIUM_ARGS
from tests.browser.fakecam import document_clip, flat_photo_clip, head_turn_clip, letterbox, write_y4m

FPS = 10
SECONDS = 8                       # long enough that no session here reaches the loop
SIZE = (640, 480)
BITS = 10
# RGB, far apart from each other (4:2:0 and the canvas blur the edges, not the middle of a colour)
COLOURS = [(255, 0, 0), (0, 255, 0), (0, 0, 255), (255, 255, 0), (255, 0, 255), (0, 255, 255), (255, 255, 255),
           (0, 0, 0)]

PAGE = b"""<!doctype html><meta charset="utf-8"><title>fakecam</title>
<video id="video" muted playsinline></video><canvas id="canvas" width="640" height="480"></canvas>
<script>
const video = document.getElementById("video");
const ctx = document.getElementById("canvas").getContext("2d", {willReadFrequently: true});
const streams = [];
function read() {
  ctx.drawImage(video, 0, 0, 640, 480);
  const data = ctx.getImageData(0, 0, 640, 480).data;
  const px = (x, y) => Array.from(data.slice((y * 640 + x) * 4, (y * 640 + x) * 4 + 3));
  let index = 0;
  for (let b = 0; b < 10; b++) {
    const [r, g, bl] = px(b * 64 + 32, 40);
    if ((r + g + bl) / 3 > 128) index |= 1 << (9 - b);
  }
  const blocks = new Array(48).fill(0);  // mean brightness of 8 x 6 blocks of 80 x 80 px
  for (let y = 0; y < 480; y += 2) for (let x = 0; x < 640; x += 2) {
    const i = (y * 640 + x) * 4;
    blocks[Math.floor(y / 80) * 8 + Math.floor(x / 80)] += (data[i] + data[i + 1] + data[i + 2]) / 3 / 1600;
  }
  return {index, colour: px(320, 320), blocks};
}
window.capture = async function (ms, keepOthers) {
  if (!keepOthers) stopAll();
  const started = performance.now();
  const stream = await navigator.mediaDevices.getUserMedia({video: {width: 640, height: 480}});
  const gum = performance.now() - started;
  streams.push(stream);
  video.srcObject = stream;
  await video.play();
  const frames = [];
  const t0 = performance.now();
  await new Promise(resolve => {
    function onFrame(now, meta) {
      frames.push({now: now - t0, captureTime: meta.captureTime, presented: meta.presentedFrames, ...read()});
      if (now - t0 < ms) video.requestVideoFrameCallback(onFrame); else resolve();
    }
    video.requestVideoFrameCallback(onFrame);
  });
  return {gum, settings: stream.getVideoTracks()[0].getSettings(), frames};
};
function stopAll() {
  for (const stream of streams.splice(0)) stream.getTracks().forEach(t => t.stop());
  video.srcObject = null;
}
window.stopAll = stopAll;
</script>
"""


def barcode_clip(seconds: int = SECONDS, fps: int = FPS) -> list[np.ndarray]:
    """Frames showing their index as a bar code (64 x 80 px per bit, top row) over the colour of their second."""
    frames = []
    for i in range(seconds * fps):
        frame = np.empty((SIZE[1], SIZE[0], 3), np.uint8)
        frame[:] = COLOURS[(i // fps) % len(COLOURS)][::-1]  # BGR
        frame[:80] = 0
        for bit in range(BITS):
            if i >> (BITS - 1 - bit) & 1:
                frame[:80, bit * 64:(bit + 1) * 64] = 255
        frames.append(frame)
    return frames


@pytest.fixture(scope="module")
def page_url():
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(PAGE)))
            self.end_headers()
            self.wfile.write(PAGE)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, name="fakecam-page", daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}/"
    server.shutdown()
    server.server_close()
    thread.join(timeout=5)


@pytest.fixture
def camera_browser(tmp_path):
    """Launches Chromium with a fake camera playing the frames given; closed after the test."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        launched = []

        def launch(frames, fps=FPS):
            clip = write_y4m(tmp_path / "clip.y4m", frames, fps)
            args = CHROMIUM_ARGS + ["--use-fake-device-for-media-stream", "--use-fake-ui-for-media-stream",
                                    f"--use-file-for-fake-video-capture={clip}"]
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=args, headless=True)
            launched.append(browser)
            return browser

        yield launch
        for browser in launched:
            browser.close()


def close_to(colour, expected, tolerance=40) -> bool:
    return all(abs(a - b) <= tolerance for a, b in zip(colour, expected))


def test_the_fake_camera_plays_the_clip(camera_browser, page_url):
    browser = camera_browser(barcode_clip())
    page = browser.new_page()
    page.set_default_timeout(15_000)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(page_url)

    first = page.evaluate("capture(2500)")
    settings, frames = first["settings"], first["frames"]
    assert (settings["width"], settings["height"], settings["frameRate"]) == (640, 480, FPS)
    indexes = [f["index"] for f in frames]
    assert len(frames) >= 12, indexes
    # The clip, in order, each frame as it was written: its colour is that of its second.
    for frame in frames:
        assert close_to(frame["colour"], COLOURS[frame["index"] // FPS]), frame
    assert all(b > a for a, b in zip(indexes, indexes[1:])), indexes          # (c) distinct frames, in order
    assert indexes[0] < FPS                                                    # from the beginning of the file
    elapsed = (frames[-1]["now"] - frames[0]["now"]) / 1000
    rate = (indexes[-1] - indexes[0]) / elapsed                                # (b) the header's 10 fps
    assert 0.7 * FPS <= rate <= 1.3 * FPS, (rate, indexes)

    # (a) Every track stopped: the next session starts the file again.
    second = page.evaluate("capture(600)")["frames"]
    assert second and second[0]["index"] < FPS < indexes[-1], (second[0], indexes[-1])

    # While a track is live, the device is shared: another session continues the clip.
    page.evaluate("capture(1200)")
    third = page.evaluate("capture(300, true)")["frames"]
    assert third and third[0]["index"] >= FPS, third[0]
    assert not errors


def distinct(frames) -> bool:
    return len({hashlib.sha1(f.tobytes()).digest() for f in frames}) == len(frames)


def test_write_y4m(tmp_path):
    frames = barcode_clip(seconds=1)
    path = write_y4m(tmp_path / "c.y4m", frames, FPS)
    data = path.read_bytes()
    header = b"YUV4MPEG2 W640 H480 F10:1 Ip A1:1 C420jpeg\n"
    frame_bytes = 640 * 480 * 3 // 2
    assert data.startswith(header) and len(data) == len(header) + len(frames) * (6 + frame_bytes)
    assert data[len(header):len(header) + 6] == b"FRAME\n"
    y = np.frombuffer(data, np.uint8, 640 * 480, len(header) + 6).reshape(480, 640)
    assert y[200, 320] == 82 and y[40, 32] == 16  # luma of red and of black (BT.601, limited range: 16-235)
    with pytest.raises(ValueError):
        write_y4m(tmp_path / "odd.y4m", [np.zeros((481, 640, 3), np.uint8)])
    with pytest.raises(ValueError):
        write_y4m(tmp_path / "mixed.y4m", [np.zeros((480, 640, 3), np.uint8), np.zeros((240, 320, 3), np.uint8)])


def test_letterbox():
    tall = np.full((1000, 500, 3), 200, np.uint8)
    out = letterbox(tall, (640, 480))
    assert out.shape == (480, 640, 3)
    assert (out[:, 320] == 200).all() and (out[:, 10] == 60).all()  # the picture in the middle, bars beside


def test_clip_makers():
    import random

    from app.vision.documents import make_document
    from tests.vision.conftest import image

    document = make_document(random.Random(3), rotation=2, noise=3).image
    clip = document_clip(document, seconds=2, fps=FPS)
    assert len(clip) == 20 and {f.shape for f in clip} == {(480, 640, 3)} and distinct(clip)

    photo = image("obama.jpg")
    live = head_turn_clip(photo, ["left", "right"], fps=FPS, lead_s=1.5, tail_s=6)
    # 15 poses of 120 ms (centre, then each turn out and back) last 1.8 s: 18 frames, after 15 and before 60
    assert len(live) == 15 + 18 + 60
    assert {f.shape for f in live} == {(480, 640, 3)} and distinct(live)
    lead, tail = np.mean(live[:15], axis=0), np.mean(live[-60:], axis=0)
    assert np.abs(lead - tail).mean() < 1.5  # frontal before and after: the same picture but for the noise
    assert np.abs(live[15 + 6].astype(float) - lead).mean() > 3  # mid-turn: another picture

    flat = flat_photo_clip(photo, ["left"], fps=FPS, lead_s=1, tail_s=2, size=(320, 240))
    assert len(flat) == 10 + round(9 * 120 / 100) + 20 and {f.shape for f in flat} == {(240, 320, 3)}
    assert distinct(flat)
    with pytest.raises(ValueError):
        document_clip(document, size=(641, 480))


def blocks(frame: np.ndarray) -> np.ndarray:
    """The page's 8 x 6 block means of brightness, computed on a clip frame."""
    return frame.astype(np.float64).mean(axis=2).reshape(6, 80, 8, 80).mean(axis=(1, 3)).flatten()


def test_a_head_turn_clip_reaches_the_page(camera_browser, page_url):
    """A realistic clip (the synthetic head turn of a face photo) arrives as it was written."""
    from tests.vision.conftest import image

    clip = head_turn_clip(image("obama.jpg"), ["left"], fps=FPS, lead_s=1.5, tail_s=3)
    other = head_turn_clip(image("biden.jpg"), ["left"], fps=FPS, lead_s=1.5, tail_s=0)
    browser = camera_browser(clip)
    page = browser.new_page()
    page.set_default_timeout(15_000)
    page.goto(page_url)
    frames = page.evaluate("capture(800)")["frames"]
    assert len(frames) >= 4
    frontal, stranger = blocks(clip[0]), blocks(other[0])
    assert np.abs(frontal - stranger).mean() > 10
    for frame in frames:  # the lead-in (frontal): the page sees the clip's picture
        assert np.abs(np.array(frame["blocks"]) - frontal).mean() < 4, np.abs(np.array(frame["blocks"]) - frontal)
