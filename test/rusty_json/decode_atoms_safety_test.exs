defmodule RustyJson.DecodeAtomsSafetyTest do
  # Not async: the atom table is global, so as little else as possible should create atoms while this counts them.
  use ExUnit.Case, async: false

  test "keys: :atoms! never creates an atom, whatever the input" do
    # Every key of every run is checked by name. The global count is checked too, but other work in the VM (a
    # module loaded on demand, a lingering process of an earlier test) can add atoms during a run, so a run whose
    # count moved is repeated with keys never seen before, up to three runs in all. A decoder that makes atoms
    # from the input moves the count in every run.
    assert Enum.any?(1..3, fn _ -> count_unchanged_over_a_run?() end),
           "the atom count grew in every run"

    assert RustyJson.decode!(~s({"ok":1}), keys: :atoms!) == %{ok: 1}
  end

  defp count_unchanged_over_a_run? do
    keys =
      for i <- 1..2000, do: "rusty_json_never_an_atom_#{i}_#{System.unique_integer([:positive])}"

    docs = Enum.map(keys, &~s({"#{&1}":1})) ++ [~s([{"ok":1},{") <> hd(keys) <> ~s(":2}])]
    # Warm up the code paths (loading modules creates atoms) before counting.
    assert_raise ArgumentError, fn -> RustyJson.decode!(hd(docs), keys: :atoms!) end
    assert_raise ArgumentError, fn -> RustyJson.decode(hd(docs), keys: :atoms!) end
    before = :erlang.system_info(:atom_count)

    for doc <- docs do
      assert_raise ArgumentError, fn -> RustyJson.decode!(doc, keys: :atoms!) end
      assert_raise ArgumentError, fn -> RustyJson.decode(doc, keys: :atoms!) end
    end

    after_run = :erlang.system_info(:atom_count)

    for key <- keys do
      assert_raise ArgumentError, fn -> String.to_existing_atom(key) end
    end

    after_run == before
  end
end
