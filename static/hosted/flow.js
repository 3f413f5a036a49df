/* The hosted IDPass flow's camera: document and portrait photos (getUserMedia, with the file input as the
   fallback: the forms work without this script), and the liveness burst: the server's head-turn challenge is shown
   step by step while frames are captured (one per new video frame, at most ~7 a second) and posted to the server,
   which checks them. No third-party code. */
(function () {
  "use strict";

  const CENTRE_MS = 1100, TURN_MS = 1500, FRAME_GAP_MS = 140, MAX_SIDE = 640;
  const WORDS = { centre: "Look straight at the camera", left: "Turn your head to your left ←",
                  right: "Turn your head to your right →" };

  function say(el, text) { if (el) { el.textContent = text; } }

  async function openCamera(video, facing, ideal) {
    if (!navigator.mediaDevices || !navigator.mediaDevices.getUserMedia) {
      throw new Error("no-camera");
    }
    const stream = await navigator.mediaDevices.getUserMedia({
      audio: false,
      video: { facingMode: { ideal: facing }, width: { ideal: ideal[0] }, height: { ideal: ideal[1] } },
    });
    video.srcObject = stream;
    await video.play().catch(() => {});
    await new Promise((resolve) => {
      if (video.videoWidth) { resolve(); } else { video.addEventListener("loadedmetadata", resolve, { once: true }); }
    });
    return stream;
  }

  function stop(stream) { if (stream) { stream.getTracks().forEach((t) => t.stop()); } }

  function grab(video, maxSide, quality) {
    const w = video.videoWidth, h = video.videoHeight;
    const scale = maxSide ? Math.min(1, maxSide / Math.max(w, h)) : 1;
    const canvas = document.createElement("canvas");
    canvas.width = Math.round(w * scale);
    canvas.height = Math.round(h * scale);
    canvas.getContext("2d").drawImage(video, 0, 0, canvas.width, canvas.height);
    return new Promise((resolve) => canvas.toBlob(resolve, "image/jpeg", quality));
  }

  function cameraError(err) {
    if (err && (err.name === "NotAllowedError" || err.name === "SecurityError")) {
      return "The camera is blocked. Allow it in your browser's settings, or choose a photo below.";
    }
    if (err && err.name === "NotFoundError") { return "No camera was found. Choose a photo below."; }
    return "The camera could not start. Choose a photo below.";
  }

  /* Document and portrait photos: camera into the file input, then the ordinary form submit. */
  function setupStill(form) {
    const portrait = form.dataset.capture === "portrait";
    const box = form.querySelector("[data-camera]"), video = form.querySelector("[data-video]");
    const openBtn = form.querySelector("[data-open-camera]"), shoot = form.querySelector("[data-shoot]");
    const file = form.querySelector("[data-file]"), hint = form.querySelector("[data-hint]");
    const submit = form.querySelector("[data-submit]");
    let stream = null;
    if (navigator.mediaDevices && navigator.mediaDevices.getUserMedia) { openBtn.hidden = false; }
    openBtn.addEventListener("click", async () => {
      try {
        stream = await openCamera(video, portrait ? "user" : "environment", portrait ? [1280, 960] : [1920, 1440]);
        box.hidden = false; shoot.hidden = false; openBtn.hidden = true;
        say(hint, portrait ? "Face the camera, then take the photo." :
          "Fill the frame with the document, hold still, then take the photo.");
        shoot.focus();
      } catch (err) { say(hint, cameraError(err)); }
    });
    shoot.addEventListener("click", async () => {
      shoot.disabled = true;
      const blob = await grab(video, 0, 0.92);
      stop(stream);
      const transfer = new DataTransfer();
      transfer.items.add(new File([blob], portrait ? "portrait.jpg" : "document.jpg", { type: "image/jpeg" }));
      file.files = transfer.files;
      say(hint, "Sending the photo…");
      form.submit();
    });
    form.addEventListener("submit", () => { if (submit) { submit.disabled = true; } });
  }

  /* Liveness: follow the challenge while frames are captured, then post them. */
  function setupLiveness(root) {
    const turns = JSON.parse(root.dataset.turns || "[]");
    const box = root.querySelector("[data-camera]"), video = root.querySelector("[data-video]");
    const start = root.querySelector("[data-start]"), hint = root.querySelector("[data-hint]");
    const instruction = root.querySelector("[data-instruction]");
    const steps = [["centre", CENTRE_MS]];
    turns.forEach((t) => { steps.push([t, TURN_MS]); steps.push(["centre", CENTRE_MS]); });

    start.addEventListener("click", async () => {
      start.disabled = true;
      let stream;
      try {
        stream = await openCamera(video, "user", [640, 480]);
      } catch (err) {
        start.disabled = false;
        say(hint, cameraError(err).replace(" Choose a photo below.", ""));
        return;
      }
      box.hidden = false;
      start.hidden = true;
      const frames = [];
      let last = 0, capturing = true;
      const pending = [];
      const take = () => {
        const now = Date.now();
        if (capturing && now - last >= FRAME_GAP_MS && frames.length + pending.length < 88) {
          last = now;
          pending.push(grab(video, MAX_SIDE, 0.85).then((blob) => { frames.push([now, blob]); }));
        }
        if (capturing) { schedule(); }
      };
      const schedule = () => {
        if (video.requestVideoFrameCallback) { video.requestVideoFrameCallback(take); }
        else { setTimeout(take, FRAME_GAP_MS); }
      };
      schedule();
      for (const [pose, ms] of steps) {
        say(instruction, WORDS[pose]);
        await new Promise((r) => setTimeout(r, ms));
      }
      capturing = false;
      await Promise.all(pending);
      stop(stream);
      say(instruction, "Checking…");
      say(hint, "Checking the movement. This takes a few seconds.");
      frames.sort((a, b) => a[0] - b[0]);
      const body = new FormData();
      body.append("csrf_token", root.dataset.csrf);
      body.append("nonce", root.dataset.nonce);
      frames.forEach(([ts, blob], i) => { body.append("ts", String(ts)); body.append("frame", blob, `f${i}.jpg`); });
      try {
        const res = await fetch(root.dataset.url, { method: "POST", body, credentials: "same-origin",
                                                    headers: { "X-CSRFToken": root.dataset.csrf } });
        const answer = await res.json().catch(() => ({}));
        say(hint, answer.message || "");
        root.dataset.result = answer.result || "error";
        setTimeout(() => { window.location.assign(answer.next || window.location.href); }, 900);
      } catch (err) {
        say(hint, "The frames could not be sent: check your connection and try again.");
        start.hidden = false; start.disabled = false; box.hidden = true;
      }
    });
  }

  document.addEventListener("DOMContentLoaded", () => {
    document.querySelectorAll("form[data-capture]").forEach(setupStill);
    document.querySelectorAll("[data-liveness]").forEach(setupLiveness);
  });
})();
