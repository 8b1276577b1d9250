//! Tests of the figures: SVG and PNG by extension, labels, colour bar, subsampling, axes.

use super::chart::short_number;
use super::scatter::ordinal;
use super::*;

#[test]
fn viridis_ends_and_is_monotone_in_lightness() {
    assert_eq!(viridis(1.0), RGBColor(253, 231, 37));
    assert_eq!(viridis(-3.0), viridis(0.0));
    assert_eq!(viridis(f64::NAN), RGBColor(128, 128, 128));
    // perceptual: luminance rises steadily from one end to the other
    let lum = |c: RGBColor| 0.2126 * c.0 as f64 + 0.7152 * c.1 as f64 + 0.0722 * c.2 as f64;
    let l: Vec<f64> = (0..=64).map(|i| lum(viridis(i as f64 / 64.0))).collect();
    assert!(l.windows(2).all(|w| w[1] >= w[0] - 0.5), "{l:?}");
}

#[test]
fn svg_and_png_by_extension_with_labels() {
    let d = std::env::temp_dir().join(format!("wio-plot-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    let pts: Vec<(f64, f64)> = (0..50_000)
        .map(|i| ((i % 100) as f64, (i / 100) as f64))
        .collect();
    let groups: Vec<u32> = (0..50_000).map(|i| (i % 3) as u32).collect();
    let s = Scatter {
        points: &pts,
        groups: &groups,
        marks: &[(1.0, 1.0)],
        title: "k-means",
        x_label: "height",
        y_label: "weight",
        max_points: 20_000,
    };
    assert_eq!(s.stride(), 3);
    assert_eq!(
        s.caption(),
        "k-means (16667 of 50000 points shown, every 3rd)"
    );
    render(&d.join("s.svg"), (600, 400), &s).unwrap();
    let svg = std::fs::read_to_string(d.join("s.svg")).unwrap();
    for want in ["height", "weight", "16667 of 50000 points shown"] {
        assert!(svg.contains(want), "{want}");
    }
    render(&d.join("s.png"), (600, 400), &s).unwrap();
    let png = std::fs::read(d.join("s.png")).unwrap();
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"));
    let e = render(&d.join("s.jpg"), (600, 400), &s).unwrap_err();
    assert!(e.to_string().contains(".svg or .png"));
    let x: Vec<f64> = (0..1000).map(f64::from).collect();
    let y: Vec<f64> = (0..3).map(f64::from).collect();
    let v = vec![x.clone(), x.clone(), vec![f64::NAN; 1000]];
    let h = Heatmap {
        x: &x,
        y: &y,
        values: &v,
        title: "t",
        x_label: "x",
        y_label: "t",
        value_label: "v",
    };
    render(&d.join("h.svg"), (600, 400), &h).unwrap();
    let svg = std::fs::read_to_string(d.join("h.svg")).unwrap();
    // the colour bar's ends: viridis' first and last colours
    assert!(
        svg.contains("#440154") && svg.contains("#FDE725"),
        "no colour bar"
    );
    // curves at snapshot times: the first and the last of six, as SVG and PNG
    let times: Vec<f64> = (0..6).map(|k| k as f64 * 0.5).collect();
    let solid: Vec<Vec<f64>> = (0..6).map(|k| vec![k as f64 * 0.1; 1000]).collect();
    let dashed = vec![vec![f64::NAN; 1000]; 6];
    let p = Profiles {
        x: &x,
        times: &times,
        solid: &solid,
        dashed: &dashed,
        curves: 2,
        title: "profiles",
        x_label: "x",
        y_label: "v, w",
    };
    render(&d.join("p.svg"), (600, 400), &p).unwrap();
    let svg = std::fs::read_to_string(d.join("p.svg")).unwrap();
    for want in ["profiles", "t = 0.0", "t = 2.5", "v, w"] {
        assert!(svg.contains(want), "{want}");
    }
    assert!(!svg.contains("t = 0.5"), "only 2 curves asked");
    render(&d.join("p.png"), (600, 400), &p).unwrap();
    assert!(
        std::fs::read(d.join("p.png"))
            .unwrap()
            .starts_with(b"\x89PNG")
    );
    std::fs::remove_dir_all(&d).unwrap();
    assert_eq!(ordinal(11), "11th");
    assert_eq!(ordinal(22), "22nd");
}

#[test]
fn charts_draw_every_axis_kind_and_skip_what_a_log_axis_cannot_show() {
    let lines = [
        Line {
            name: "cpu".into(),
            points: vec![(1e3, 0.5), (1e4, 2.0), (1e5, f64::NAN), (0.0, 1.0)],
            dashed: false,
        },
        Line {
            name: "seed: cpu".into(),
            points: vec![(1e3, 1.0), (1e5, 9.0)],
            dashed: true,
        },
        Line {
            name: "empty".into(),
            points: vec![],
            dashed: false,
        },
    ];
    for (log_x, log_y) in [(false, false), (true, false), (false, true), (true, true)] {
        for points_only in [false, true] {
            let c = Chart {
                lines: &lines,
                title: "time against n",
                x_label: "n",
                y_label: "seconds",
                log_x,
                log_y,
                points_only,
            };
            let svg = svg_string((500, 350), &c).unwrap();
            for want in ["time against n", "seconds", "seed: cpu", "<svg"] {
                assert!(svg.contains(want), "{want} ({log_x} {log_y})");
            }
            assert_eq!(c.colour_of("seed: cpu"), c.colour_of("cpu"));
        }
    }
    // nothing drawable still gives a chart
    let none = [Line {
        name: "x".into(),
        points: vec![(f64::NAN, 1.0)],
        dashed: false,
    }];
    let c = Chart {
        lines: &none,
        title: "t",
        x_label: "a",
        y_label: "b",
        log_x: true,
        log_y: true,
        points_only: false,
    };
    assert!(svg_string((300, 200), &c).unwrap().contains("<svg"));
    assert_eq!(short_number(1_500_000.0), "1.5M");
    assert_eq!(short_number(300_000.0), "300k");
    assert_eq!(short_number(0.25), "0.25");
    assert_eq!(short_number(2e-5), "2e-5");
}

#[test]
fn log_ticks_label_one_and_three_times_powers_of_ten() {
    let edges = [(1e9, "G"), (1e6, "M"), (1e3, "k"), (1.0, "")];
    let secs = [(1.0, " s"), (1e-3, " ms"), (1e-6, " µs")];
    assert_eq!(log_tick(3e6, &edges), "3M");
    assert_eq!(log_tick(1e8, &edges), "100M");
    assert_eq!(log_tick(30.0, &edges), "30");
    assert_eq!(log_tick(2e6, &edges), "");
    assert_eq!(log_tick(0.003, &secs), "3 ms");
    assert_eq!(log_tick(1e-4, &secs), "100 µs");
    assert_eq!(log_tick(1e-7, &secs), "1e-7");
}

#[test]
fn timings_are_written_as_svg_and_png_of_the_asked_size() {
    let d = std::env::temp_dir().join(format!("wio-timings-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    let mut points = Vec::new();
    for (i, x) in [1e5, 3e5, 1e6].into_iter().enumerate() {
        for variant in ["deep", "shallow", "other"] {
            for (j, series) in ["hierholzer", "parallel"].into_iter().enumerate() {
                let seconds = 1e-4 * (i + 1) as f64 * (j + 1) as f64;
                points.push(Timing {
                    series,
                    variant,
                    x,
                    seconds,
                });
            }
        }
    }
    let chart = Timings {
        points: &points,
        variants: ["deep", "shallow"],
        title: "Euler circuit: time against edges",
        x_label: "edges",
    };
    render(&d.join("t.svg"), (900, 650), &chart).unwrap();
    let svg = std::fs::read_to_string(d.join("t.svg")).unwrap();
    assert!(svg.contains(r#"width="900" height="650""#), "size");
    for want in [
        "Euler circuit: time against edges",
        "edges",
        "seconds",
        "hierholzer (deep)",
        "parallel (shallow)",
        "300k",
        "1M",
        "ms",
    ] {
        assert!(svg.contains(want), "{want}");
    }
    assert!(!svg.contains("(other)"), "only the two variants are drawn");
    render(&d.join("t.png"), (900, 650), &chart).unwrap();
    let png = std::fs::read(d.join("t.png")).unwrap();
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"));
    // the IHDR chunk: width and height, big-endian
    assert_eq!(png[16..24], [0, 0, 3, 132, 0, 0, 2, 138]);
    std::fs::remove_dir_all(&d).unwrap();
}
