/* The case page's charts (vendored ECharts), each over the table or list that holds the same
   data. From the json_script elements the template writes:
   #flow-data {players: [name, ...], data: [[column, row, wins, points, heaviest], ...],
               labels: {feeder, beneficiary, wins, points}}
     the flow matrix as a heat map. Column: the beneficiary, row: the feeder; the colour is
     the wins.
   #identifier-data {nodes: [{id, name, category, full?}], links: [{source, target}],
                     categories: [{name}]}
     the shared devices and addresses as a graph on a circle (web.case_evidence
     .identifier_graph): players (category 0, round) linked to the identifiers they used
     (devices, IP addresses: square); a node's tooltip has the identifier whole. */
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

  var CATEGORY_COLORS = ["#d7263d", "#8a5a12", "#1c6dd0", "#17693a", "#5f5f64"];

  function identifierChart(element, graph) {
    var names = {};
    graph.nodes.forEach(function (node) { names[node.id] = node.name; });
    var categories = graph.categories.map(function (category, i) {
      return {
        name: category.name,
        symbol: i === 0 ? "circle" : "roundRect",
        itemStyle: { color: CATEGORY_COLORS[i % CATEGORY_COLORS.length] }
      };
    });
    var chart = echarts.init(element);
    chart.setOption({
      animation: false,
      legend: {
        data: categories.map(function (category) { return category.name; }),
        bottom: 0, selectedMode: false
      },
      tooltip: {
        formatter: function (item) {
          if (item.dataType === "edge") {
            return names[item.data.source] + " — " + names[item.data.target];
          }
          var node = item.data;
          return node.full ? graph.categories[node.category].name + " " + node.full : node.name;
        }
      },
      series: [{
        type: "graph",
        layout: "circular",
        circular: { rotateLabel: false },
        left: 90, right: 90, top: 36, bottom: 56,
        data: graph.nodes.map(function (node) {
          return {
            id: node.id, name: node.name, category: node.category, full: node.full,
            symbolSize: node.category === 0 ? 40 : 26
          };
        }),
        links: graph.links,
        categories: categories,
        label: { show: true, position: "bottom", color: "#1d1d1f", fontSize: 13 },
        lineStyle: { color: "#8e8e93", width: 2, opacity: 0.9 },
        emphasis: { focus: "adjacency", lineStyle: { width: 3 } }
      }]
    });
    return chart;
  }

  function init() {
    if (!window.echarts) {
      return;
    }
    var charts = [];
    var flow = read("flow-data");
    var flowElement = document.getElementById("flow-chart");
    if (flow && flowElement) {
      charts.push(flowChart(flowElement, flow));
    }
    var graph = read("identifier-data");
    var graphElement = document.getElementById("identifier-chart");
    if (graph && graphElement) {
      charts.push(identifierChart(graphElement, graph));
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
