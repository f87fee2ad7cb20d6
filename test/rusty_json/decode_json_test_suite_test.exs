defmodule RustyJson.DecodeJSONTestSuiteTest do
  # Every file of JSONTestSuite's test_parsing/: y_ accepted with the value of every reference decoder on this VM
  # (jiffy, OTP's :json; see RustyJson.Reference), n_ rejected, i_ answered without crashing.
  use ExUnit.Case, async: true

  alias RustyJson.Reference

  @dir Path.expand("../../../shared/data/JSONTestSuite/test_parsing", __DIR__)

  # y_ files where a reference that keeps the last of duplicate keys (jiffy) is not Jason: Jason (and RustyJson)
  # keep the first.
  @first_wins %{
    "y_object_duplicated_key.json" => %{"a" => "b"}
  }

  defp files(prefix) do
    @dir |> File.ls!() |> Enum.filter(&String.starts_with?(&1, prefix)) |> Enum.sort()
  end

  defp expected(ref, name, bin) do
    case {Reference.duplicate_keys(ref), @first_wins} do
      {:last, %{^name => value}} -> {:ok, value}
      _ -> Reference.decode(ref, bin)
    end
  end

  test "y_ files are accepted with the references' value" do
    files = files("y_")
    refs = Reference.names()

    # A y_ file a reference rejects must still be accepted; its value is then checked by the others.
    bad =
      for name <- files,
          bin = File.read!(Path.join(@dir, name)),
          result = RustyJson.decode(bin),
          expected = Enum.map(refs, &{&1, expected(&1, name, bin)}),
          not match?({:ok, _}, result) or
            Enum.any?(expected, fn {_, e} -> e != :error and result != e end),
          do: {name, result, expected}

    IO.puts(
      "JSONTestSuite y_: #{length(files) - length(bad)}/#{length(files)} accepted as " <>
        Enum.join(refs, " and ")
    )

    assert bad == []
  end

  test "n_ files are rejected with a DecodeError" do
    files = files("n_")

    bad =
      for name <- files,
          bin = File.read!(Path.join(@dir, name)),
          result = RustyJson.decode(bin),
          not match?({:error, %RustyJson.DecodeError{}}, result),
          do: {name, result}

    IO.puts("JSONTestSuite n_: #{length(files) - length(bad)}/#{length(files)} rejected")
    assert bad == []
  end

  test "i_ files are answered without crashing" do
    files = files("i_")

    answers =
      for name <- files do
        bin = File.read!(Path.join(@dir, name))

        case RustyJson.decode(bin) do
          {:ok, _} -> :accepted
          {:error, %RustyJson.DecodeError{} = e} -> {:rejected, Exception.message(e)}
        end
      end

    accepted = Enum.count(answers, &(&1 == :accepted))

    IO.puts(
      "JSONTestSuite i_: #{length(files)} answered (#{accepted} accepted, " <>
        "#{length(files) - accepted} rejected)"
    )

    assert length(answers) == length(files)
  end
end
