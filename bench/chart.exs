defmodule RustyJson.Bench.Chart do
  @moduledoc false
  # Writes a horizontal bar chart (SVG, no dependencies) of RustyJson's time as a ratio to jiffy's per input,
  # on a log scale with 1.0 (parity) marked: bars left of the line are faster than jiffy.

  @ticks [0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0]
  @bar 14
  @gap 6
  @label_w 170
  @plot_w 420

  @doc "rows: [{label, ratio}]; returns the SVG text."
  def ratio_svg(title, rows) do
    {lo, hi} = {:math.log10(0.02), :math.log10(5.0)}
    x = fn r -> @label_w + (:math.log10(min(max(r, 0.02), 5.0)) - lo) / (hi - lo) * @plot_w end
    top = 40
    height = top + length(rows) * (@bar + @gap) + 30
    width = @label_w + @plot_w + 70

    bars =
      rows
      |> Enum.with_index()
      |> Enum.map(fn {{label, ratio}, i} ->
        y = top + i * (@bar + @gap)
        color = if ratio <= 1.0, do: "#2e7d32", else: "#c62828"

        """
        <text x="#{@label_w - 8}" y="#{y + @bar - 3}" text-anchor="end">#{escape(label)}</text>
        <rect x="#{@label_w}" y="#{y}" width="#{fmt(x.(ratio) - @label_w)}" height="#{@bar}" fill="#{color}"/>
        <text x="#{fmt(x.(ratio) + 4)}" y="#{y + @bar - 3}">#{:erlang.float_to_binary(ratio, decimals: 2)}</text>
        """
      end)

    axis_y = top + length(rows) * (@bar + @gap)

    ticks =
      Enum.map(@ticks, fn t ->
        """
        <line x1="#{fmt(x.(t))}" y1="#{top - 4}" x2="#{fmt(x.(t))}" y2="#{axis_y}" stroke="#{if t == 1.0, do: "#000", else: "#ddd"}"/>
        <text x="#{fmt(x.(t))}" y="#{axis_y + 16}" text-anchor="middle">#{t}</text>
        """
      end)

    """
    <svg xmlns="http://www.w3.org/2000/svg" width="#{width}" height="#{height}" font-family="sans-serif" font-size="12">
    <rect width="100%" height="100%" fill="#fff"/>
    <text x="#{@label_w}" y="20" font-size="14" font-weight="bold">#{escape(title)}</text>
    #{ticks}
    #{bars}
    </svg>
    """
  end

  defp fmt(v), do: :erlang.float_to_binary(v / 1, decimals: 1)

  defp escape(s), do: s |> String.replace("&", "&amp;") |> String.replace("<", "&lt;")
end
