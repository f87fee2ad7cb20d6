defmodule RustyJson.NativeTest do
  use ExUnit.Case, async: true

  @moduletag :tmp_dir

  test "the NIF library is loaded (a failed load is only a warning at compile time)" do
    assert RustyJson.Native.load_error() == nil
    assert RustyJson.Native.loaded?()
  end

  Code.require_file("../support/object_files.exs", __DIR__)

  test "the library's thread-locals take little static TLS" do
    # mimalloc's thread-locals are initial-exec, so the whole TLS segment comes from the static TLS glibc sets
    # aside for every library loaded at run time (about 1.6 KB, shared with the VM's other NIFs): at 1.6 KB this
    # library alone would fail to load ("cannot allocate memory in static TLS block") beside another such NIF.
    library = Path.join(:code.priv_dir(:rusty_json), "native/rustyjson_nif.so")

    if match?({:unix, :linux}, :os.type()) do
      assert RustyJson.ObjectFiles.elf_tls_size(File.read!(library)) <= 1024
    else
      assert File.exists?(library)
    end
  end

  @fast_paths ~w(heap_binaries flat_maps hash_maps hashed_maps small_integers floats env_heap encode_reads binary_reads held_binary_reads sub_binary_reads hash_map_reads map_order)a

  test "info/0: the OTP release, and every fast path on (all off under RUSTYJSON_FAST_PATHS=off)" do
    info = RustyJson.Native.info()
    assert info.otp_release == List.to_string(:erlang.system_info(:otp_release))
    on? = System.get_env("RUSTYJSON_FAST_PATHS") != "off"
    assert info.fast_paths == Map.new(@fast_paths, &{&1, on?})
  end

  test "loading learns the term layout on a dirty CPU scheduler, before any call needs it" do
    # A fresh VM: in this one other tests may have called the NIF first. Its first call of the module loads it
    # (running `@on_load`) and then asks where the layout was learned; nil would mean the first encode or decode
    # learns it, on a normal scheduler.
    ebin = Path.dirname(:code.which(RustyJson))
    script = "IO.write(inspect(RustyJson.Native.layout_learned_on()))"

    {output, status} = System.cmd("elixir", ["-pa", ebin, "-e", script], stderr_to_stdout: true)

    assert {status, output} == {0, ":dirty_cpu"}
  end

  test "RUSTYJSON_FAST_PATHS=off switches every fast path off, and results stay the same", %{
    tmp_dir: tmp
  } do
    ebin = Path.dirname(:code.which(RustyJson))

    # The child writes its results to a file (standard output, in Unicode mode from OTP 26 on, is no place for
    # an arbitrary binary).
    script = ~S"""
    doc = ~s([{"id": 1, "name": "ab", "tags": ["x"], "n": 12345678901234567890}, {"id": -2.5, "name": null}])
    big = Map.new(1..40, &{"key_#{&1}", &1})
    File.write!(System.fetch_env!("OUT"), :erlang.term_to_binary({RustyJson.Native.info().fast_paths,
      RustyJson.decode!(doc), RustyJson.encode!([big, %{a: [1, 2.5]}]), RustyJson.decode!(RustyJson.encode!([big, big]))}))
    """

    run = fn fast_paths ->
      out = Path.join(tmp, "out_#{fast_paths}")
      env = [{"RUSTYJSON_FAST_PATHS", fast_paths}, {"OUT", out}]

      {output, status} =
        System.cmd("elixir", ["-pa", ebin, "-e", script], env: env, stderr_to_stdout: true)

      assert status == 0, output
      :erlang.binary_to_term(File.read!(out))
    end

    {off, decoded, encoded, round_trip} = run.("off")
    assert off == Map.new(@fast_paths, &{&1, false})
    {_, ^decoded, ^encoded, ^round_trip} = run.("on")
    assert [%{"id" => 1, "n" => 12_345_678_901_234_567_890} | _] = decoded
    assert [big, big] = round_trip
    assert map_size(big) == 40
  end

  test "without its library the module says so clearly and how to rebuild", %{tmp_dir: tmp} do
    # A copy of the compiled modules with no priv/ beside them, run in a separate VM.
    ebin = Path.join([tmp, "rusty_json", "ebin"])
    File.mkdir_p!(ebin)
    File.cp_r!(Path.dirname(:code.which(RustyJson)), ebin)

    {output, status} =
      System.cmd("elixir", ["-pa", ebin, "-e", "RustyJson.encode!(1)"], stderr_to_stdout: true)

    assert status != 0

    assert output =~
             "could not load the RustyJson NIF from #{tmp}/rusty_json/priv/native/rustyjson_nif.so"

    assert output =~ "mix compile --force"
    assert output =~ "rusty_json_nif_not_loaded"
  end
end
