defmodule RustyJson.DecodeAtomsSafetyTest do
  # Not async: the atom table is global, so nothing else may create atoms while this counts them.
  use ExUnit.Case, async: false

  test "keys: :atoms! never creates an atom, whatever the input" do
    keys =
      for i <- 1..2000, do: "rusty_json_never_an_atom_#{i}_#{System.unique_integer([:positive])}"

    docs = Enum.map(keys, &~s({"#{&1}":1})) ++ [~s([{"ok":1},{") <> hd(keys) <> ~s(":2}])]
    # Warm up the code paths (loading modules creates atoms) before counting.
    assert_raise ArgumentError, fn -> RustyJson.decode!(hd(docs), keys: :atoms!) end
    before = :erlang.system_info(:atom_count)

    for doc <- docs do
      assert_raise ArgumentError, fn -> RustyJson.decode!(doc, keys: :atoms!) end
      assert_raise ArgumentError, fn -> RustyJson.decode(doc, keys: :atoms!) end
    end

    assert :erlang.system_info(:atom_count) == before
    assert RustyJson.decode!(~s({"ok":1}), keys: :atoms!) == %{ok: 1}
  end
end
