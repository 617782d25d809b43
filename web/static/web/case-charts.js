/* The case page's flow matrix as an ECharts heat map (vendored ECharts; the <table> under it
   holds the same numbers). Data from the json_script element the template writes:
   #flow-data {players: [name, ...], data: [[column, row, wins, points, heaviest], ...],
               labels: {feeder, beneficiary, wins, points}}
   Column: the beneficiary, row: the feeder; the colour is the wins. */
(function () {
  "use strict";

  function read(id) {
    var element = document.getElementById(id);
    return element ? JSON.parse(element.textContent) : null;
  }

  function flowChart(element, flow) {
    var labels = flow.labels || {};
    var most = Math.max.apply(null, [1].concat(flow.data.map(function (cell) { return cell[2]; })));
    var chart = echarts.init(element);
    chart.setOption({
      animation: false,
      grid: { left: 80, right: 16, top: 12, bottom: 64, containLabel: true },
      tooltip: {
        formatter: function (item) {
          var cell = item.data;
          return flow.players[cell[1]] + " → " + flow.players[cell[0]] + "<br>" +
            labels.wins + " " + cell[2] + " · " + labels.points + " " + cell[3];
        }
      },
      xAxis: {
        type: "category", data: flow.players, name: labels.beneficiary,
        nameLocation: "middle", nameGap: 28, splitArea: { show: true }
      },
      yAxis: {
        type: "category", data: flow.players, name: labels.feeder,
        nameLocation: "middle", nameGap: 64, inverse: true, splitArea: { show: true }
      },
      visualMap: {
        dimension: 2, min: 0, max: most, calculable: false, orient: "horizontal", left: "center", bottom: 0,
        itemHeight: 120, inRange: { color: ["#fafafc", "#f7b4bd", "#d7263d"] }
      },
      series: [{
        name: labels.wins,
        type: "heatmap",
        data: flow.data,
        encode: { x: 0, y: 1, value: 2 },
        label: { show: true, formatter: function (item) { return item.data[2]; } },
        emphasis: { itemStyle: { borderColor: "#1c1c1e", borderWidth: 1 } }
      }]
    });
    return chart;
  }

  function init() {
    var flow = read("flow-data");
    var element = document.getElementById("flow-chart");
    if (!window.echarts || !flow || !element) {
      return;
    }
    var chart = flowChart(element, flow);
    window.addEventListener("resize", function () { chart.resize(); });
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", init);
  } else {
    init();
  }
})();
