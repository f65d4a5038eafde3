// Line charts drawn on a canvas, for the overview's rates and queued messages. No library: a few series of
// (time, value) samples, the newest on the right, scaled to a rounded maximum.

const PADDING = { left: 56, right: 12, top: 12, bottom: 24 };

/** The smallest of 1, 2 or 5 times a power of ten that is at least value (the chart's top). */
function niceCeiling(value) {
  if (!(value > 0)) {
    return 1;
  }
  const power = Math.pow(10, Math.floor(Math.log10(value)));
  for (const step of [1, 2, 5, 10]) {
    if (step * power >= value) {
      return step * power;
    }
  }
  return 10 * power;
}

function format(value) {
  if (value >= 1e6) {
    return `${(value / 1e6).toFixed(1)}M`;
  }
  if (value >= 1e4) {
    return `${(value / 1e3).toFixed(0)}k`;
  }
  return Number.isInteger(value) ? String(value) : value.toFixed(1);
}

export class LineChart {
  /**
   * @param canvas the canvas drawn on
   * @param series [{key, label, color}]
   * @param spanMillis how much history the chart shows
   */
  constructor(canvas, series, spanMillis) {
    this.canvas = canvas;
    this.series = series;
    this.spanMillis = spanMillis;
    this.samples = [];
    // redrawn at the new size when the window or layout changes; the observer goes with the canvas
    new ResizeObserver(() => this.draw()).observe(canvas);
  }

  /** Adds a sample: values by series key; drops samples older than the span. */
  push(time, values) {
    this.samples.push({ time, values });
    while (this.samples.length > 2 && this.samples[0].time < time - this.spanMillis) {
      this.samples.shift();
    }
    this.canvas.dataset.samples = String(this.samples.length);
    this.draw();
  }

  draw() {
    const canvas = this.canvas;
    const ratio = window.devicePixelRatio || 1;
    const width = canvas.clientWidth || 600;
    const height = canvas.clientHeight || 200;
    canvas.width = Math.round(width * ratio);
    canvas.height = Math.round(height * ratio);
    const g = canvas.getContext('2d');
    g.setTransform(ratio, 0, 0, ratio, 0, 0);
    g.clearRect(0, 0, width, height);
    const plotWidth = width - PADDING.left - PADDING.right;
    const plotHeight = height - PADDING.top - PADDING.bottom;
    let max = 0;
    for (const s of this.samples) {
      for (const series of this.series) {
        max = Math.max(max, s.values[series.key] || 0);
      }
    }
    const top = niceCeiling(max);
    const now = this.samples.length ? this.samples[this.samples.length - 1].time : Date.now();
    const x = (time) => PADDING.left + plotWidth * (1 - (now - time) / this.spanMillis);
    const y = (value) => PADDING.top + plotHeight * (1 - value / top);

    g.font = '11px system-ui, sans-serif';
    g.fillStyle = '#666';
    g.strokeStyle = '#e3e3e3';
    g.lineWidth = 1;
    g.textAlign = 'right';
    g.textBaseline = 'middle';
    for (let i = 0; i <= 4; i++) {
      const value = (top * i) / 4;
      const lineY = Math.round(y(value)) + 0.5;
      g.beginPath();
      g.moveTo(PADDING.left, lineY);
      g.lineTo(width - PADDING.right, lineY);
      g.stroke();
      g.fillText(format(value), PADDING.left - 6, lineY);
    }
    g.textAlign = 'center';
    g.textBaseline = 'top';
    const seconds = this.spanMillis / 1000;
    for (let i = 0; i <= 4; i++) {
      const ago = (seconds * i) / 4;
      g.fillText(ago === 0 ? 'now' : `-${Math.round(ago)} s`, x(now - ago * 1000), height - PADDING.bottom + 6);
    }

    g.lineWidth = 2;
    g.lineJoin = 'round';
    for (const series of this.series) {
      g.strokeStyle = series.color;
      g.beginPath();
      this.samples.forEach((s, i) => {
        const px = x(s.time);
        const py = y(s.values[series.key] || 0);
        if (i === 0) {
          g.moveTo(px, py);
        } else {
          g.lineTo(px, py);
        }
      });
      if (this.samples.length === 1) {
        const only = this.samples[0];
        g.arc(x(only.time), y(only.values[series.key] || 0), 2, 0, 2 * Math.PI);
      }
      g.stroke();
    }
  }
}
