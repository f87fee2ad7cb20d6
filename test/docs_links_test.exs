defmodule RustyJson.DocsLinksTest do
  # ex_doc cannot be installed here (no Hex): this checks what it would. Every guide listed as an extra exists and
  # is in the package's files, and every relative link between the README, the guides and CONTRIBUTING.md names a
  # file that exists and, with `#anchor`, a heading of it (anchors as ex_doc and GitHub make them).
  use ExUnit.Case, async: true

  @root Path.expand("..", __DIR__)
  @docs ["README.md", "CONTRIBUTING.md" | Path.wildcard(Path.join(@root, "guides/*.md"))]
        |> Enum.map(&Path.relative_to(&1, @root))

  defp project, do: RustyJson.MixProject.project()

  test "every extra exists, and every guide is an extra, grouped, and in the package's files" do
    docs = project()[:docs]
    files = project()[:package][:files]

    guides =
      Path.wildcard(Path.join(@root, "guides/*.md")) |> Enum.map(&Path.relative_to(&1, @root))

    assert guides != []
    for extra <- docs[:extras], do: assert(File.exists?(Path.join(@root, extra)), extra)

    for guide <- guides do
      assert guide in docs[:extras], "#{guide} is not in mix.exs's docs extras"
      assert guide in docs[:groups_for_extras][:Guides], "#{guide} is in no group"
      assert guide in files, "#{guide} is not in the package's files"
    end

    for file <- ~w(README.md CONTRIBUTING.md), do: assert(file in files)
  end

  test "relative links resolve to files and anchors" do
    broken =
      for doc <- @docs,
          {target, anchor} <- links(File.read!(Path.join(@root, doc))),
          problem = problem(doc, target, anchor),
          do: "#{doc}: #{target}##{anchor}: #{problem}"

    assert broken == []
  end

  defp links(text) do
    # Code blocks hold no links (and may hold `[...](...)`-looking code).
    text = Regex.replace(~r/```.*?```/s, text, "")

    for [_, target] <- Regex.scan(~r/\]\(([^)\s]+)\)/, text),
        not String.contains?(target, "://"),
        not String.starts_with?(target, "mailto:") do
      case String.split(target, "#", parts: 2) do
        [path, anchor] -> {path, anchor}
        [path] -> {path, nil}
      end
    end
  end

  defp problem(doc, target, anchor) do
    path = if target == "", do: doc, else: Path.join(Path.dirname(doc), target)
    full = Path.join(@root, path)

    cond do
      not File.exists?(full) -> "no such file"
      anchor == nil or not String.ends_with?(path, ".md") -> nil
      anchor in anchors(File.read!(full)) -> nil
      true -> "no such heading"
    end
  end

  defp anchors(text) do
    text = Regex.replace(~r/```.*?```/s, text, "")

    for [_, heading] <- Regex.scan(~r/^#+ +(.+)$/m, text) do
      heading
      |> String.downcase()
      |> String.replace(~r/[^\p{L}\p{N}_\- ]/u, "")
      |> String.replace(" ", "-")
    end
  end
end
