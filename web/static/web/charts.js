/* Player page charts (ECharts, vendored): the rating history line and the Master titles
   timeline. Data comes from json_script elements the template writes:
   #rating-data  [[iso datetime, rating], ...]
   #title-data   {terms: [{start, valid_until, state, code}], lifetime_since, today}
   #chart-labels {rating, master, lifetime, today, states: {state: label}} */
(function () {
  "use strict";

  var DAY = 86400000;
  var RED = "#d7263d";
  var STATE_COLORS = { current: RED, lapsed: "#b4b4bb", revoked: "#3a3a3c" };

  function read(id) {
    var element = document.getElementById(id);
    return element ? JSON.parse(element.textContent) : null;
  }

  function day(text) {
    return Date.parse(text + "T00:00:00+08:00");
  }

  function ratingChart(element, points, labels) {
    var chart = echarts.init(element);
    chart.setOption({
      animation: false,
      color: [RED],
      grid: { left: 48, right: 16, top: 16, bottom: 32 },
      tooltip: {
        trigger: "axis",
        valueFormatter: function (value) { return Number(value).toFixed(1); }
      },
      xAxis: { type: "time", axisLine: { lineStyle: { color: "#c7c7cc" } } },
      yAxis: { type: "value", scale: true, splitLine: { lineStyle: { color: "#f0f0f3" } } },
      series: [{
        name: labels.rating,
        type: "line",
        data: points,
        showSymbol: points.length <= 30,
        symbolSize: 6,
        lineStyle: { width: 2 },
        areaStyle: { color: "rgba(215, 38, 61, 0.08)" }
      }]
    });
    return chart;
  }

  function titleChart(element, data, labels) {
    var states = labels.states || {};
    var today = day(data.today);
    var starts = data.terms.map(function (term) { return day(term.start); });
    var ends = data.terms.map(function (term) { return day(term.valid_until) + DAY; });
    var lifetime = data.lifetime_since ? day(data.lifetime_since) : null;
    var first = Math.min.apply(null, starts.concat(lifetime === null ? [today] : [lifetime]));
    var last = Math.max.apply(null, ends.concat([today]));
    var margin = Math.max((last - first) * 0.04, 15 * DAY);
    var marks = [{
      xAxis: today,
      label: { formatter: labels.today, color: "#6e6e73" },
      lineStyle: { type: "dashed", color: "#8e8e93" }
    }];
    if (lifetime !== null) {
      marks.push({
        xAxis: lifetime,
        label: { formatter: "★ " + labels.lifetime, color: "#b7791f", fontWeight: "bold" },
        lineStyle: { type: "solid", color: "#f0b429", width: 3 }
      });
    }
    var chart = echarts.init(element);
    chart.setOption({
      animation: false,
      grid: { left: 12, right: 12, top: 30, bottom: 28 },
      tooltip: {
        formatter: function (item) {
          var term = data.terms[item.dataIndex];
          return labels.master + " " + term.start + " – " + term.valid_until +
            "<br>" + (states[term.state] || term.state) + " · " + term.code;
        }
      },
      xAxis: { type: "time", min: first - margin, max: last + margin, splitLine: { show: false } },
      yAxis: { type: "category", data: [labels.master], show: false },
      series: [{
        type: "custom",
        encode: { x: [1, 2], y: 0 },
        data: data.terms.map(function (term, i) {
          return {
            value: [0, starts[i], ends[i]],
            itemStyle: { color: STATE_COLORS[term.state] || RED }
          };
        }),
        renderItem: function (params, api) {
          var from = api.coord([api.value(1), 0]);
          var to = api.coord([api.value(2), 0]);
          var height = api.size([0, 1])[1] * 0.45;
          var shape = echarts.graphic.clipRectByRect(
            { x: from[0], y: from[1] - height / 2, width: Math.max(to[0] - from[0], 3), height: height },
            { x: params.coordSys.x, y: params.coordSys.y, width: params.coordSys.width, height: params.coordSys.height }
          );
          return shape && { type: "rect", shape: { x: shape.x, y: shape.y, width: shape.width, height: shape.height, r: 4 }, style: api.style() };
        },
        markLine: { symbol: "none", silent: true, data: marks }
      }]
    });
    return chart;
  }

  function init() {
    if (!window.echarts) {
      return;
    }
    var labels = read("chart-labels") || {};
    var charts = [];
    var points = read("rating-data");
    var ratingElement = document.getElementById("rating-chart");
    if (points && ratingElement) {
      charts.push(ratingChart(ratingElement, points, labels));
    }
    var titles = read("title-data");
    var titleElement = document.getElementById("title-chart");
    if (titles && titleElement) {
      charts.push(titleChart(titleElement, titles, labels));
    }
    window.addEventListener("resize", function () {
      charts.forEach(function (chart) { chart.resize(); });
    });
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", init);
  } else {
    init();
  }
})();
